import Foundation
import GatehouseCore
import GatehouseStore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// Session tokens carry the `gths_` prefix (``SessionToken``) so that secret scanners find leaked ones; tokens
/// issued before the prefix keep working until their sessions end. Over real loopback HTTP.
@Suite("Session tokens")
struct SessionTokenTests {
    @Test("a new session's token is gths_ and 43 base64url characters, and it works")
    func prefixed() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let (token, _) = try await gw.nativeLogin()
                #expect(token.hasPrefix("gths_"))
                #expect(token.count == 48)
                #expect(Base64URL.decode(String(token.dropFirst(5)))?.count == 32)
                #expect(try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(token)).status == 200)
            }
        }
    }

    @Test("a token issued before the prefix (43 characters, none) still opens its session")
    func legacyTokenWorks() async throws {
        let store = MemorySessionStore()
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, store: store) { gw in
                let legacy = RandomToken.make()
                let now = gw.clock.source.now()
                let identity = Identity(subject: "legacy-user")
                try await store.insertSession(
                    SessionRecord(
                        id: RandomToken.make(byteCount: 16), tokenHash: RandomToken.hash(legacy), provider: "demo", subject: identity.subject,
                        identity: try JSONEncoder().encode(identity),
                        sealedCredential: try gw.gateway.sessions.sealer.seal(json: Credential(accessToken: "t", issuedAt: now)),
                        createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600)))
                let session = try await gw.http.send(.GET, gw.url("/v1/session"), headers: gw.bearer(legacy))
                #expect(session.status == 200)
                #expect(session.json?["subject"]?.stringValue == "legacy-user")
            }
        }
    }

    @Test("only values that start with the prefix claim to be session tokens")
    func isPrefixed() {
        #expect(SessionToken.isPrefixed(SessionToken.make()))
        #expect(SessionToken.isPrefixed("gths_"))
        #expect(!SessionToken.isPrefixed(RandomToken.make()))
        #expect(!SessionToken.isPrefixed("GTHS_x"))
        #expect(!SessionToken.isPrefixed("x.gths_.y"))
    }
}
