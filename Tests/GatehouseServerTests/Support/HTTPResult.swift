import Foundation
import GatehouseCore
import NIOHTTP1

/// A buffered response seen by the test client.
struct HTTPResult: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data

    var json: JSONValue? { JSONValue.parse(body) }
    var text: String { String(decoding: body, as: UTF8.self) }
    var location: String? { headers.first(name: "location") }
    /// The problem+json `code`.
    var problemCode: String? { json?["code"]?.stringValue }

    /// The login-binding cookie this response sets (`name=value`), as the browser would send it back.
    var loginBinding: String? {
        headers["set-cookie"].lazy.compactMap { $0.split(separator: ";").first.map(String.init) }
            .first { $0.contains("gatehouse_login_") && !$0.hasSuffix("=") }
    }

    /// The `Cookie` header carrying this response's login binding (none when it sets none).
    var bindingHeaders: [(String, String)] { loginBinding.map { [("Cookie", $0)] } ?? [] }

    /// The query parameters of the `Location` header.
    var locationQuery: [String: String] {
        guard let location, let query = location.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
        return Dictionary(FormEncoding.decode(String(query)), uniquingKeysWith: { first, _ in first })
    }
}
