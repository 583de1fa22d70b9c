import Foundation
import GatehouseCore
import GatehouseStore
import NIOHTTP1

@testable import GatehouseServer

/// The common set-up of the relay's tests: a gateway in front of the stand-ins whose sessions resolve from
/// memory (as `serve` and `demo` run it: the relay's synchronous path), with user `alice` signed in.
struct RelayFixture: Sendable {
    let gateway: GatewayInstance
    /// Alice's bearer token.
    let token: String
    let clock: TestClock

    /// The gateway's port, for raw connections.
    var port: Int { Int(gateway.baseURL.split(separator: ":").last!)! }

    /// The `Authorization` and `Host` lines of a raw request.
    var auth: String { "Authorization: Bearer \(token)\r\nHost: 127.0.0.1\r\n" }

    /// A store whose sessions resolve from memory.
    static func cachedStore(_ clock: TestClock) -> CachingSessionStore {
        let store = CachingSessionStore(base: MemorySessionStore(), timeToLive: 30, clock: clock.source)
        store.feedStarted()
        return store
    }

    /// Runs `body` with a fresh gateway (its sessions in a plain store, read off the loop, unless `cached`).
    static func with<T: Sendable>(
        cached: Bool = true, configure: (inout ServerSettings) -> Void = { _ in }, _ body: (RelayFixture) async throws -> T
    ) async throws -> T {
        let clock = TestClock()
        let store: any SessionStore = cached ? cachedStore(clock) : MemorySessionStore()
        return try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, store: store, clock: clock, configure: configure) { gateway in
                let (token, _) = try await gateway.nativeLogin()
                return try await body(RelayFixture(gateway: gateway, token: token, clock: clock))
            }
        }
    }

    /// A new session of provider `demo` for `identity`, straight in the store (as a provider that hands out such
    /// an identity would leave it); its token.
    func session(for identity: Identity) async throws -> String {
        let credential = Credential(accessToken: "t", issuedAt: Date())
        return try await gateway.gateway.sessions.create(
            provider: "demo", result: LoginResult(identity: identity, credential: credential), dpopThumbprint: nil
        ).0
    }

    /// How many requests the relay took so far (`gatehouse_relayed_requests_total`).
    func relayed() async throws -> Int {
        let metrics = try await gateway.http.send(.GET, gateway.url("/metrics"))
        let line = metrics.text.split(separator: "\n").first { $0.hasPrefix("gatehouse_relayed_requests_total ") }
        return Int(line?.split(separator: " ").last ?? "0") ?? 0
    }
}
