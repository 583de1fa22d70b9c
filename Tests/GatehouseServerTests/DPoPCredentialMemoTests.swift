import Crypto
import Foundation
import GatehouseCore
import GatehouseStore
import Testing

@testable import GatehouseServer

/// A connection's ``CredentialMemo`` of a DPoP-bound token (``SessionResolver/credentialFromMemory(authorization:memo:now:providerGeneration:presented:)``):
/// it stands for the token's look-up only; every request's proof is checked against the remembered session.
@Suite("The connection's memo of a DPoP-bound token")
struct DPoPCredentialMemoTests {
    /// A resolver over a cached store, its session manager and its DPoP verifier (default policy).
    static func resolver(_ clock: TestClock) throws -> (SessionResolver, SessionManager, DPoPVerifier) {
        let store = RelayFixture.cachedStore(clock)
        let sealingKey = CredentialSealer.Key(id: "k1", bytes: Data(repeating: 7, count: 32))
        let sessions = SessionManager(
            store: store, sealer: try CredentialSealer(keys: [sealingKey]), clock: clock.source,
            settings: ServerSettings(publicURL: DPoPVerifierTests.publicURL), onEnd: { _ in })
        let dpop = DPoPVerifier(
            policy: DPoPPolicy(), publicURL: DPoPVerifierTests.publicURL, store: store, clock: clock.source, sealingKeys: [sealingKey])
        let resolver = SessionResolver(
            cookieName: "s", sessions: sessions, dpop: dpop,
            providerTokens: ProviderTokenAuthenticator(providers: ProviderSet([]), clock: clock.source))
        return (resolver, sessions, dpop)
    }

    @Test("a remembered bound session still needs this request's proof, signed by its key; a sign-out voids the memo")
    func everyProofIsChecked() async throws {
        let clock = TestClock()
        let (resolver, sessions, dpop) = try Self.resolver(clock)
        let target = DPoPVerifierTests.target
        let key = P256.Signing.PrivateKey()
        let other = P256.Signing.PrivateKey()
        // Both keys' verifiers are kept (their first proofs), so their proofs are judged without waiting.
        let thumbprint = try await dpop.verify([DPoPVerifierTests.proof(key: key)], target: target, ath: nil, status: 401).thumbprint
        _ = try await dpop.verify([DPoPVerifierTests.proof(key: other)], target: target, ath: nil, status: 401)
        let (token, session) = try await sessions.create(
            provider: "demo", result: LoginResult(identity: Identity(subject: "u"), credential: Credential(accessToken: "a", issuedAt: Date())),
            dpopThumbprint: thumbprint)
        _ = try await sessions.authenticate(token: token)  // now in the store's cache
        let authorization = "DPoP \(token)"

        func fromMemory(_ proofs: [String], memo: CredentialMemo?) -> (credential: CredentialOutcome, memo: CredentialMemo?)? {
            resolver.credentialFromMemory(
                authorization: authorization, memo: memo, now: clock.source.now(), providerGeneration: 0,
                presented: {
                    try resolver.presented(authorization: authorization, cookies: [], csrf: nil, method: "GET", proofs: proofs, target: target)
                })
        }
        func proof(_ signer: P256.Signing.PrivateKey = key) -> String { DPoPVerifierTests.proof(key: signer, token: token) }

        let first = try #require(fromMemory([proof()], memo: nil))
        let memo = try #require(first.memo, "a DPoP token is remembered as a bearer one is")
        #expect(memo.authorization == authorization)
        guard case .session(let found, let spent?) = first.credential else {
            Issue.record("no session with a proof to spend")
            return
        }
        #expect(found.id == session.id && spent.thumbprint == thumbprint)

        // From the memo: a fresh proof gives the session and that proof to spend.
        let fresh = proof()
        let second = try #require(fromMemory([fresh], memo: memo))
        guard case .session(_, let toSpend?) = second.credential else {
            Issue.record("the memo skipped the proof")
            return
        }
        #expect(toSpend.jti != spent.jti)
        // From the memo: another key, no proof, two proofs, a proof of another request: refused, the memo not kept.
        let refusals: [[String]] = [
            [proof(other)], [], [proof(), proof()], [DPoPVerifierTests.proof(key: key, method: "POST", token: token)],
            [DPoPVerifierTests.proof(key: key, token: "another-token")],
        ]
        for proofs in refusals {
            let outcome = try #require(fromMemory(proofs, memo: memo))
            guard case .refused = outcome.credential else {
                Issue.record("accepted from the memo: \(proofs.count) proof(s)")
                continue
            }
            #expect(outcome.memo == nil)
        }

        // Signed out: the cache evicts the session, and the memo no longer holds.
        try await sessions.end(session.id)
        if let after = fromMemory([proof()], memo: memo) {
            #expect(after.credential.session == nil, "the memo outlived a sign-out")
        }
    }
}
