import Foundation

/// An RFC 9457 problem document as the gateway sends it (`application/problem+json`): branch on `code`.
struct GatewayProblem: Decodable, Sendable {
    var title: String?
    var status: Int?
    var detail: String?
    var code: String?

    /// The problem in `body`, when `contentType` is `application/problem+json` and the body decodes.
    static func parse(contentType: String?, body: Data) -> GatewayProblem? {
        guard let contentType, contentType.lowercased().hasPrefix("application/problem+json") else { return nil }
        return try? JSONDecoder().decode(GatewayProblem.self, from: body)
    }

    /// `<code>: <detail>` (falling back to the title, then the status).
    var summary: String {
        let text = detail ?? title ?? status.map { "HTTP \($0)" } ?? "no detail"
        return code.map { "\($0): \(text)" } ?? text
    }
}
