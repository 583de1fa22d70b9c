import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// An error shown to a person in a browser (a login that cannot go on), rather than to a program:
/// a small HTML page with the same status and stable `code` a problem document would carry.
enum ErrorPage {
    static func response(_ error: GatehouseError, headers: HTTPFields = [:]) -> Response {
        let title = HTTPResponseStatus(statusCode: error.status).reasonPhrase
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed</title>\
            <meta name="gatehouse-error" content="\(HTMLEscaping.escape(error.code.rawValue))"></head><body>\
            <h1>Sign-in failed</h1><p>\(HTMLEscaping.escape(error.detail))</p>\
            <p><small>\(error.status) \(HTMLEscaping.escape(title)) · <code>\(HTMLEscaping.escape(error.code.rawValue))</code></small></p>\
            <p><a href="/">Back to the start page</a></p></body></html>
            """
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        fields[HTTPField.Name("Content-Security-Policy")!] = "default-src 'none'"
        return Response(status: HTTPResponse.Status(code: error.status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
