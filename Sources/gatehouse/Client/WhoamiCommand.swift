import ArgumentParser
import Foundation
import NIOHTTP1

/// `gatehouse whoami`: the stored session as the gateway sees it (`GET /v1/session`), pretty-printed JSON.
struct WhoamiCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami", abstract: "Show your session at a gateway (GET /v1/session).")

    @Option(help: "The gateway (default: the only one you are signed in to).") var gateway: String?
    @OptionGroup var trust: TrustOptions

    func run() async throws {
        try await ClientFailure.reporting {
            var session = try SignedInSession.load(gateway: gateway)
            let response = try await GatewayClient.with(gateway: session.gateway, caFile: session.caFile(given: trust.caFile)) { client in
                try await session.send(client, .GET, "/v1/session", headers: [("Accept", "application/json")])
            }
            guard response.isSuccess else { throw session.failure(response) }
            guard let object = try? JSONSerialization.jsonObject(with: response.body),
                let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            else {
                throw ClientFailure("unexpected answer from \(response.url): not JSON")
            }
            ClientOutput.line(Self.compactingEmpty(String(decoding: pretty, as: UTF8.self)))
        }
    }

    /// Foundation on Linux pretty-prints an empty array or object over three lines (`[\n\n    ]`); a person
    /// reads `[]` and `{}`. A JSON string holds no raw newline, so only empty containers match.
    static func compactingEmpty(_ json: String) -> String {
        json.replacing(try! Regex(#"\[\n\s*\]"#), with: "[]").replacing(try! Regex(#"\{\n\s*\}"#), with: "{}")
    }
}
