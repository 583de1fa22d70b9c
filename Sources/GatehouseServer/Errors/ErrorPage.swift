import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// An error shown to a person in a browser (a login that cannot go on, a navigation to a browser route
/// that failed, ``BrowserNavigation``), rather than to a program: a small HTML page with the same status,
/// stable `code` and `request_id` a problem document would carry.
enum ErrorPage {
    /// The page for `error`.
    /// - Parameters:
    ///   - requestID: the request's id, shown so that a person can quote it and an operator find its log lines.
    ///   - title: the page's heading.
    static func response(_ error: GatehouseError, requestID: String? = nil, title: String = "Sign-in failed", headers: HTTPFields = [:]) -> Response {
        let reason = HTTPResponseStatus(statusCode: error.status).reasonPhrase
        let code = HTMLEscaping.escape(error.code.rawValue)
        let requestID = requestID.flatMap { $0.isEmpty ? nil : HTMLEscaping.escape($0) }
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(HTMLEscaping.escape(title))</title>\
            <meta name="gatehouse-error" content="\(code)">\
            \(requestID.map { #"<meta name="gatehouse-request-id" content="\#($0)">"# } ?? "")</head><body>\
            <h1>\(HTMLEscaping.escape(title))</h1><p>\(HTMLEscaping.escape(error.detail))</p>\
            <p><small>\(error.status) \(HTMLEscaping.escape(reason)) · <code class="code">\(code)</code>\
            \(requestID.map { #" · request <code class="request-id">\#($0)</code>"# } ?? "")</small></p>\
            <p><a href="/">Back to the start page</a></p></body></html>
            """
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        if let retryAfter = error.retryAfter { fields[.retryAfter] = String(retryAfter) }
        fields[PageFraming.contentSecurityPolicy] = "default-src 'none'"
        return Response(
            status: HTTPResponse.Status(code: error.status), headers: PageFraming.denying(fields), body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The request id a request's logger carries (``AccessLogMiddleware`` sets it), for pages made where
    /// only the logger is at hand.
    static func requestID(of logger: Logger) -> String? {
        guard case .string(let id)? = logger[metadataKey: "request_id"] else { return nil }
        return id
    }
}
