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
    func fromMemory(tokenHash: String, authorization: String, audience: String?, now: Date) -> Memo? {
        // Read before the look-up: an eviction after it makes the memo stale at once.
        // A session bound to a key is only ever taken with its proof (``decideAsync(_:remoteAddress:)``).
        guard let epoch = resolver.cacheEpoch, let (session, sessionUntil) = resolver.cachedSession(tokenHash: tokenHash, now: now) else { return nil }
        return memo(session, source: .session(epoch: epoch), authorization: authorization, until: sessionUntil, audience: audience, now: now)
    }

    /// A provider token's session (its cached verdict, until `until`) and assertion as a memo to keep; `nil`
    /// when an assertion must be signed first.
    func providerMemo(
        _ session: ActiveSession, authorization: String, until: Date, generation: UInt64, audience: String?, now: Date
    ) -> Memo? {
        memo(session, source: .providerToken(generation: generation), authorization: authorization, until: until, audience: audience, now: now)
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
