import Foundation
import HTTPTypes
import Hummingbird

/// JSON responses with `Cache-Control: no-store` (they may describe sessions).
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let data = try encode(value)
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The gateway's JSON: keys sorted (stable bodies), slashes not escaped.
    ///
    /// JSONEncoder, never JSONSerialization: `.sortedKeys` there compares with the locale (ICU), which made
    /// the first answer that used it load several megabytes of ICU's pages.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// A redirect (302 Found), never 307 (RFC 9700: no 307 for redirects that may carry credentials).
    static func redirect(to location: String, status: HTTPResponse.Status = .found, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.location] = location
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields)
    }
}
