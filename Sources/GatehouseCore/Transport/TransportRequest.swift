public import Foundation

/// A buffered request to a provider endpoint.
public struct TransportRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: Data?

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// A `POST` with an `application/x-www-form-urlencoded` body (OAuth token and revocation endpoints).
    public static func form(url: String, _ fields: [(String, String)], headers: [(name: String, value: String)] = []) -> TransportRequest {
        let body = FormEncoding.encode(fields)
        return TransportRequest(
            method: "POST", url: url,
            headers: headers + [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Data(body.utf8))
    }
}
