import Foundation
import GatehouseCore
import Hummingbird
import NIOCore

/// Reads small JSON request bodies with a size limit and clear errors.
enum RequestBodyReader {
    static func json<T: Decodable>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw GatehouseError.payloadTooLarge("The request body exceeds \(limit) bytes.")
        } catch {
            // Malformed chunked encoding, or the client went away mid-body: the client's fault, not a size.
            throw GatehouseError.invalidRequest("The request body could not be read (malformed chunked encoding, or the client went away).")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch DecodingError.keyNotFound(let key, _) {
            throw GatehouseError.invalidRequest("The JSON body lacks '\(key.stringValue)'.")
        } catch DecodingError.typeMismatch(_, let context) {
            throw GatehouseError.invalidRequest(
                "The JSON body has a wrong type at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'.")
        } catch {
            throw GatehouseError.invalidRequest("The request body is not the expected JSON object.")
        }
    }

    /// An `application/x-www-form-urlencoded` body as fields (the first of a repeated name wins).
    static func form(from request: Request, limit: Int) async throws -> [String: String] {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw GatehouseError.payloadTooLarge("The form exceeds \(limit) bytes.")
        } catch {
            throw GatehouseError.invalidRequest("The request body could not be read (malformed chunked encoding, or the client went away).")
        }
        return Dictionary(FormEncoding.decode(String(decoding: buffer.readableBytesView, as: UTF8.self)), uniquingKeysWith: { first, _ in first })
    }
}
