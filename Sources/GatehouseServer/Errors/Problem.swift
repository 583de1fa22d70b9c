import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Renders RFC 9457 problem documents.
enum Problem {
    static func response(_ error: GatehouseError, requestID: String? = nil) -> Response {
        Response(status: HTTPResponse.Status(code: error.status), headers: headers(error), body: .init(byteBuffer: body(error, requestID: requestID)))
    }

    /// The header fields of a problem answer: its media type, `Retry-After`, and the 401 challenge.
    static func headers(_ error: GatehouseError) -> HTTPFields {
        var headers: HTTPFields = [.contentType: "application/problem+json", .cacheControl: "no-store"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        switch error.code {
        case .invalidToken where error.challengesBearer:
            headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
        case .insufficientScope:
            // Scope tokens are NQCHAR, no quote and no backslash (RFC 6749 §3.3); anything else stays out of the quoted string.
            let scope = (error.requiredScope ?? []).filter { token in
                token.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
            }
            headers[.wwwAuthenticate] = "Bearer error=\"insufficient_scope\", scope=\"\(scope.joined(separator: " "))\""
        case .stepUpRequired where error.status == 401:
            // RFC 9470 §3: what to sign in again with. `acr` values are checked to be plain tokens (`gatehouse check`).
            var challenge = "Bearer error=\"insufficient_user_authentication\""
            if let acr = error.stepUp?.acr { challenge += ", acr_values=\"\(acr.joined(separator: " "))\"" }
            if let maxAge = error.stepUp?.maxAgeSeconds { challenge += ", max_age=\(maxAge)" }
            headers[.wwwAuthenticate] = challenge
        case .invalidDPoPProof, .useDPoPNonce, .invalidToken:
            // RFC 9449 §7.1: the DPoP challenge, with the error and the algorithms a proof may use.
            if error.status == 401 {
                headers[.wwwAuthenticate] = "DPoP error=\"\(error.code.rawValue)\", algs=\"\(DPoPPolicy.algorithms.joined(separator: " "))\""
            }
        default:
            if error.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"gatehouse\"" }
        }
        if let nonce = error.dpopNonce { headers[DPoPVerifier.nonceField] = nonce }
        if let location = error.location { headers[.location] = location }
        return headers
    }

    /// The head of a problem answer written as NIOHTTP1 parts (the relay, the connection's own guards).
    static func head(_ error: GatehouseError, bodyLength: Int, close: Bool, requestID: String? = nil) -> HTTPResponseHead {
        var fields = HTTPHeaders(headers(error).map { ($0.name.rawName, $0.value) })
        if let requestID { fields.add(name: "X-Request-Id", value: requestID) }
        fields.add(name: "Content-Length", value: String(bodyLength))
        if close { fields.add(name: "Connection", value: "close") }
        return HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: error.status), headers: fields)
    }

    /// Answers `error` on an HTTP/1.1 connection from a handler whose outbound parts are NIOHTTP1's, then closes
    /// the connection: for refusals after which nothing more of it can be trusted.
    static func answerAndClose(_ error: GatehouseError, context: ChannelHandlerContext) {
        let document = body(error)
        context.write(NIOAny(HTTPServerResponsePart.head(head(error, bodyLength: document.readableBytes, close: true))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(document))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// The JSON document, with `request_id` when the request has one.
    static func body(_ error: GatehouseError, requestID: String? = nil) -> ByteBuffer {
        let document = ProblemDocument(
            title: HTTPResponseStatus(statusCode: error.status).reasonPhrase,
            status: error.status, detail: error.detail, code: error.code.rawValue, retryAfter: error.retryAfter,
            requestID: requestID?.isEmpty == false ? requestID : nil)
        return ByteBuffer(bytes: (try? JSONResponse.encode(document)) ?? Data())
    }
}
