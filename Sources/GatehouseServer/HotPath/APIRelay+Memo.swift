import Foundation
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// What a connection remembers of its last credential (``APIRelay/Memo``), and when it still holds.
extension APIRelay {
    /// What one connection remembers of the session its last request presented: a keep-alive client sends
    /// the same `Authorization` each time, and while the answer it rests on still holds (``Source``) and no
    /// deadline has passed, the session and assertion found then are still the ones the look-ups would find —
    /// without hashing the token or taking a lock again.
    struct Memo {
        /// What the session came from, and what must not have changed since for it to hold.
        enum Source: Equatable {
            /// A Gatehouse session from the store's cache, which has evicted nothing since
            /// (``CachedSessionLookup/evictionEpoch``).
            case session(epoch: UInt64)
            /// A provider-issued token's cached verdict, made under the providers of this
            /// ``ProviderSet/generation`` (a reload voids it).
            case providerToken(generation: UInt64)
        }

        /// The `Authorization` value, byte for byte.
        let authorization: String
        let source: Source
        /// The first of: the session's end, idle limit and next recorded activity (a provider token: its
        /// verdict's end), the assertion's reuse limit, and one second after it was made (a bound of its own
        /// on anything else unforeseen).
        let until: Date
        let session: ActiveSession
        let assertion: String?
        /// The audience `assertion` is for (`nil`: none was needed).
        let audience: String?
    }

    /// The connection's memo, when it still holds for this `Authorization` value.
    func remembered(_ memo: Memo?, authorization: String?, audience: String?, now: Date) -> Memo? {
        guard let memo, let authorization, memo.authorization == authorization, memo.audience == audience, now < memo.until else { return nil }
        switch memo.source {
        case .session(let epoch): guard epoch == resolver.cacheEpoch else { return nil }
        case .providerToken(let generation): guard generation == resolver.providerGeneration else { return nil }
        }
        return memo
    }

    /// The session of a token (by its hash) and its assertion (when the backend gets one) from memory alone,
    /// as a memo to keep; `nil` when the store must be read or an assertion signed first.
    private func sessionFromMemory(tokenHash: String, authorization: String, audience: String?, now: Date) -> Memo? {
        // Read before the look-up: an eviction after it makes the memo stale at once.
        // A session bound to a key is only ever taken with its proof (``decideAsync(_:remoteAddress:)``).
        guard let epoch = resolver.cacheEpoch, let (session, sessionUntil) = resolver.cachedSession(tokenHash: tokenHash, now: now) else { return nil }
        return memo(session, source: .session(epoch: epoch), authorization: authorization, until: sessionUntil, audience: audience, now: now)
    }

    /// What memory alone says of a presented credential, for both the relay's decision and its `/v1/authz` answer.
    enum FromMemory {
        /// The session and its assertion, as a memo; `keep`: the connection may remember it (a bearer token,
        /// which a keep-alive client sends again byte for byte).
        case found(Memo, keep: Bool)
        /// A provider token whose cached verdict is a refusal.
        case refused(any Error)
        /// Not in memory: the store must be read, the provider token verified, an assertion signed or (DPoP) a
        /// proof checked.
        case unknown
    }

    /// The session `token` stands for from memory alone: a Gatehouse session in the store's cache, or a
    /// provider-issued bearer token's cached verdict, with its assertion when the backend gets one.
    func fromMemory(
        token: String, presentation: SessionResolver.Presentation, authorization: String?, audience: String?, now: Date
    ) -> FromMemory {
        // A DPoP-bound session is only ever taken with its proof.
        guard presentation != .dpop else { return .unknown }
        // Hashed once: the session cache and the provider tokens' verdicts are both by the token's hash.
        let tokenHash = RandomToken.hash(token)
        // A JWT is never a session token (those have no dots): no session look-up for a provider's JWT.
        let providerJWT = presentation == .bearer && ProviderTokenAuthenticator.isJWT(token)
        if !providerJWT, let found = sessionFromMemory(tokenHash: tokenHash, authorization: authorization ?? "", audience: audience, now: now) {
            return .found(found, keep: presentation == .bearer && authorization != nil)
        }
        guard presentation == .bearer, let authorization, let cached = resolver.cachedProviderVerdict(tokenHash: tokenHash, now: now) else {
            return .unknown
        }
        switch cached.verdict {
        case .success(let session):
            let found = memo(
                session, source: .providerToken(generation: cached.generation), authorization: authorization, until: cached.until,
                audience: audience, now: now)
            return found.map { .found($0, keep: true) } ?? .unknown
        case .failure(let refusal):
            return .refused(refusal)
        }
    }

    /// A memo of `session`, valid until `until` at most; `nil` when its assertion is not at hand.
    private func memo(_ session: ActiveSession, source: Memo.Source, authorization: String, until: Date, audience: String?, now: Date) -> Memo? {
        var assertion: String?
        var until = min(until, now.addingTimeInterval(1))
        if let audience {
            guard let (signed, signedUntil) = signer.cachedAssertionEntry(for: session, audience: audience, now: now) else { return nil }
            assertion = signed
            until = min(until, signedUntil)
        }
        return Memo(authorization: authorization, source: source, until: until, session: session, assertion: assertion, audience: audience)
    }
}
