import ArgumentParser
import NIOHTTP1

/// `gatehouse logout`: ends the session at the gateway (`DELETE /v1/session`) and forgets it, whatever the
/// gateway answers (a session that already ended answers 401).
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout", abstract: "End your session at a gateway and remove it from this computer.")

    @Option(help: "The gateway (default: the only one you are signed in to).") var gateway: String?
    @OptionGroup var trust: TrustOptions

    func run() async throws {
        try await ClientFailure.reporting {
            var session = try SignedInSession.load(gateway: gateway)
            var warning: String?
            do {
                let response = try await GatewayClient.with(gateway: session.gateway, caFile: session.caFile(given: trust.caFile)) { client in
                    try await session.send(client, .DELETE, "/v1/session", headers: [("Accept", "application/json")])
                }
                if !response.isSuccess, response.status != 401 {
                    warning = "the gateway answered HTTP \(response.status) (\(response.failure.message))"
                }
            } catch let failure as ClientFailure {
                warning = failure.message
            }
            try session.forget()
            if let warning { ClientOutput.error("warning: \(warning); the session was removed from this computer anyway") }
            ClientOutput.line("Signed out of \(session.gateway)")
        }
    }
}
