import Foundation
import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import GatehouseServer

/// A back-channel logout whose store fails half-way (after its `jti` is recorded) is retried by the provider: the
/// retry ends the sessions; a replay of a logout that went through ends nothing.
@Suite struct BackChannelLogoutRetryTests {
    /// A provider whose logout tokens are their own `jti` and name every session of `alice`.
    struct Provider: BackChannelLogoutProvider {
        let descriptor = ProviderDescriptor(id: "idp", kind: "oidc")
        let acceptsBackChannelLogout = true

        func verifyLogoutToken(_ token: String) async throws -> LogoutToken {
            LogoutToken(jti: token, sid: nil, subject: "alice", issuedAt: Date())
        }
    }

    /// A memory store whose session look-up by provider fails while `failures` is above zero.
    final class FlakyStore: ForwardingSessionStore {
        let base = MemorySessionStore()
        let failures = Mutex(0)
        var forwardee: any SessionStore { base }

        func sessionIDs(provider: String, matching match: ProviderSessionMatch) async throws -> [String] {
            let fails = failures.withLock { count in
                defer { count = max(0, count - 1) }
                return count > 0
            }
            if fails { throw StoreUnavailableError(reason: "connection reset") }
            return try await base.sessionIDs(provider: provider, matching: match)
        }
    }

    static func sessionRecord(_ id: String) -> SessionRecord {
        let now = Date()
        return SessionRecord(
            id: id, tokenHash: "hash-\(id)", provider: "idp", subject: "alice", identity: Data("{\"subject\":\"alice\"}".utf8),
            sealedCredential: Data(), createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600))
    }

    @Test func aLogoutTheStoreFailedHalfWayIsRetriedAndAReplayOfOneThatWentThroughIsNot() async throws {
        let store = FlakyStore()
        let sessions = SessionManager(
            store: store, sealer: try CredentialSealer(keys: [.init(id: "k1", bytes: Data(repeating: 1, count: 32))]), clock: .system,
            settings: ServerSettings(publicURL: "http://gw"), onEnd: { _ in })
        let router = Router(context: GatehouseRequestContext.self)
        BackChannelLogoutController(providers: ProviderSet([Provider()]), sessions: sessions, clock: .system).addRoutes(to: router)
        try await Application(router: router).test(.router) { client in
            func logout(_ token: String) async throws -> HTTPResponse.Status {
                try await client.execute(
                    uri: "/v1/auth/idp/backchannel-logout", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "logout_token=\(token)")
                ).status
            }
            try await store.insertSession(Self.sessionRecord("s1"))
            store.failures.withLock { $0 = 1 }
            #expect(try await logout("t1") != .ok, "the store failed after the jti was recorded")
            #expect(try await store.session(id: "s1") != nil)
            // The provider's retry of the same token ends the session.
            #expect(try await logout("t1") == .ok)
            #expect(try await store.session(id: "s1") == nil)
            // alice signs in again; a replay of the token that went through ends nothing.
            try await store.insertSession(Self.sessionRecord("s2"))
            #expect(try await logout("t1") == .badRequest)
            #expect(try await store.session(id: "s2") != nil)
            // A token that went through at once is refused on its first replay too.
            #expect(try await logout("t2") == .ok)
            try await store.insertSession(Self.sessionRecord("s3"))
            #expect(try await logout("t2") == .badRequest)
            #expect(try await store.session(id: "s3") != nil)
        }
    }
}
