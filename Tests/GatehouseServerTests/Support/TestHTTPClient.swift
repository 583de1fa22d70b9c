import AsyncHTTPClient
import Foundation
import GatehouseCore
import NIOCore
import NIOHTTP1

/// A client that never follows redirects, as a thin client or test sees each hop.
struct TestHTTPClient: Sendable {
    let client: HTTPClient

    func send(_ method: HTTPMethod = .GET, _ url: String, headers: [(String, String)] = [], body: Data? = nil) async throws -> HTTPResult {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return HTTPResult(status: Int(response.status.code), headers: response.headers, body: Data(buffer.readableBytesView))
    }

    func json(_ method: HTTPMethod, _ url: String, _ object: [String: String], headers: [(String, String)] = []) async throws -> HTTPResult {
        let data = try JSONSerialization.data(withJSONObject: object)
        return try await send(method, url, headers: headers + [("Content-Type", "application/json")], body: data)
    }

    func form(_ url: String, _ fields: [(String, String)]) async throws -> HTTPResult {
        try await send(.POST, url, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data(FormEncoding.encode(fields).utf8))
    }
}
