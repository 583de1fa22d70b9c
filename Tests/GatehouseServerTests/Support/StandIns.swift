import AsyncHTTPClient
import Foundation
import GatehouseDemo

/// The real loopback peers of an end-to-end test: a stand-in OAuth 2.0 server and an echo backend.
struct StandIns: Sendable {
    let oauth: StandInOAuthServer
    let backend: DemoBackend

    static func start(accessTokenLifetime: Int = 300, rotate: Bool = true, clientSecret: String? = nil) async throws -> StandIns {
        let oauth = StandInOAuthServer(
            configuration: .init(clientSecret: clientSecret, accessTokenLifetime: accessTokenLifetime, rotateRefreshTokens: rotate))
        _ = try await oauth.start()
        let backend = DemoBackend()
        _ = try await backend.start()
        return StandIns(oauth: oauth, backend: backend)
    }

    func stop() async {
        await oauth.stop()
        await backend.stop()
    }

    /// Runs `body` with fresh stand-ins, stopping them afterwards whatever happens.
    static func with<T: Sendable>(accessTokenLifetime: Int = 300, _ body: (StandIns) async throws -> T) async throws -> T {
        let standIns = try await start(accessTokenLifetime: accessTokenLifetime)
        do {
            let result = try await body(standIns)
            await standIns.stop()
            return result
        } catch {
            await standIns.stop()
            throw error
        }
    }
}
