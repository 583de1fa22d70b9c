import ArgumentParser
import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseServer

/// `gatehouse-bench seed-session`: puts one valid session into the configured store and prints its token,
/// so a load test can send `Authorization: Bearer <token>` without any login flow.
///
/// The record is built as the gateway's session manager builds it: token from ``RandomToken``, stored as
/// its hash, identity as JSON, the credential sealed by ``CredentialSealer`` under the configuration's first
/// sealing key (loaded by ``GatewayLauncher/keys(_:)``, which generates keys under `data/` when none are
/// configured, as `gatehouse serve` does). The credential has no refresh token and no expiry, so no
/// request ever triggers a refresh, and the provider's endpoints are never called.
struct SeedSessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed-session",
        abstract: "Insert one long-lived session into the configured store and print its token.")

    @Option(help: "The gatehouse.yaml the gateway runs with.")
    var config: String

    @Option(help: "The provider id the session belongs to.")
    var provider: String

    @Option(help: "The provider access token to seal into the session (default: a random one).")
    var accessToken: String?

    @Option(help: "The session's subject.")
    var subject: String = "bench-user"

    @Option(help: "Seconds until the session ends (default: sessions.absolute_lifetime_seconds).")
    var lifetime: Int?

    func run() async throws {
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config)
        } catch let errors as ConfigurationErrors {
            for line in errors.lines { Bench.standardError(line) }
            throw ExitCode(1)
        }
        let providerFile = (configuration.providersDirectory as NSString).appendingPathComponent("\(provider).yaml")
        if !FileManager.default.fileExists(atPath: providerFile) {
            Bench.note("warning: no \(providerFile); is '\(provider)' a configured provider?")
        }
        let sealer = try CredentialSealer(keys: try GatewayLauncher.keys(configuration).sealing)
        let settings = GatewayLauncher.settings(from: configuration)

        let token = SessionToken.make()
        let now = Date()
        let identity = Identity(subject: subject, email: "\(subject)@example.com", name: "Benchmark User")
        let credential = Credential(accessToken: accessToken ?? RandomToken.make(), tokenType: "Bearer", issuedAt: now)
        let record = SessionRecord(
            id: RandomToken.make(byteCount: 16),
            tokenHash: RandomToken.hash(token),
            provider: provider,
            subject: identity.subject,
            identity: try JSONEncoder().encode(identity),
            sealedCredential: try sealer.seal(json: credential),
            createdAt: now,
            lastSeenAt: now,
            expiresAt: now.addingTimeInterval(lifetime.map(TimeInterval.init) ?? settings.absoluteLifetime))

        let store = try GatewayLauncher.makeStore(configuration, logger: Bench.logger())
        try await Bench.withMigratedStore(store) {
            try await store.insertSession(record)
        }
        print(token)
    }
}
