import Foundation
import HTTPTypes
import Hummingbird

/// JSON responses with `Cache-Control: no-store` (they may describe sessions).
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A redirect (302 Found), never 307 (RFC 9700: no 307 for redirects that may carry credentials).
    static func redirect(to location: String, status: HTTPResponse.Status = .found, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.location] = location
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields)
    }
}
