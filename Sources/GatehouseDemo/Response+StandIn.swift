import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A JSON body with sorted keys, so stand-in answers are stable in tests.
    static func json(_ object: [String: JSONValue], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(JSONValue.object(object))) ?? Data("{}".utf8)
        var fields = headers
        fields[.contentType] = "application/json;charset=UTF-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func html(_ page: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html;charset=UTF-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: page))
        )
    }

    /// A 302 to `location` (RFC 6749 §4.1.2 uses 302; no 307, which would re-post the credentials).
    static func found(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// What a stand-in switched to unavailable answers: 503 with `Retry-After`.
    static func temporarilyUnavailable() -> Response {
        json(
            ["error": .string("temporarily_unavailable"), "error_description": .string("the stand-in is switched off")],
            status: .serviceUnavailable,
            headers: [.retryAfter: "1"]
        )
    }
}
