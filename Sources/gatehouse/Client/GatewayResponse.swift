import Foundation

/// A gateway's answer, read whole: status, headers, body, and the newest `DPoP-Nonce` seen on the way.
struct GatewayResponse: Sendable {
    /// The URL that was requested.
    var url: String
    var status: Int
    /// Header fields as (name, value) pairs, in the order received.
    var headers: [(name: String, value: String)]
    var body: Data
    /// The `DPoP-Nonce` of this answer, else the one the request was made with.
    var dpopNonce: String?

    /// The first value of a header field (case-insensitive name).
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the status is 2xx.
    var isSuccess: Bool { (200..<300).contains(status) }

    /// The problem document of the answer, if it is one.
    var problem: GatewayProblem? {
        GatewayProblem.parse(contentType: header("Content-Type"), body: body)
    }

    /// The body decoded as JSON.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw ClientFailure("unexpected answer from \(url) (HTTP \(status)): \(error)")
        }
    }

    /// The failure to report for an unexpected answer: the problem's `<code>: <detail>`, else the status.
    var failure: ClientFailure {
        if let problem { return ClientFailure(problem.summary) }
        return ClientFailure("HTTP \(status) from \(url)")
    }
}
