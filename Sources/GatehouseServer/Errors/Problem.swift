import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOHTTP1

/// Renders RFC 9457 problem documents.
enum Problem {
    static func response(_ error: GatehouseError) -> Response {
        let status = HTTPResponse.Status(code: error.status)
        var body: [String: Any] = [
            "type": "about:blank",
            // RFC 9457 §4.2.1: with about:blank, the title is the status's reason phrase.
            "title": HTTPResponseStatus(statusCode: error.status).reasonPhrase,
            "status": error.status,
            "detail": error.detail,
            "code": error.code.rawValue,
        ]
        if let retryAfter = error.retryAfter { body["retry_after"] = retryAfter }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        var headers: HTTPFields = [.contentType: "application/problem+json", .cacheControl: "no-store"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if error.status == 401 { headers[.wwwAuthenticate] = "Bearer realm=\"gatehouse\"" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
