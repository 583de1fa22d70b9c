import Foundation
import GatehouseCore

/// What one connection remembers of the session its last request presented: a keep-alive client sends the same
/// `Authorization` each time, and while the answer it rests on still holds (``Source``) and no deadline has
/// passed, the session (and the assertion signed for it) found then are still the ones the look-ups would
/// find — without hashing the token or taking a lock again. Made and judged by
/// ``SessionResolver/credentialFromMemory(_:memo:now:)``; the assertion is attached by whoever signs.
///
/// A class of constants: it goes from the connection to the decision and the state machine and back with every
/// request, and a reference is one retain where a copy of the session's fields was one per field.
final class CredentialMemo: Sendable {
    /// What the session came from, and what must not have changed since for it to hold.
    enum Source: Equatable, Sendable {
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
    /// The first of: the session's end, idle limit and next recorded activity (a provider token: its verdict's
    /// end), the assertion's reuse limit, and one second after it was made (a bound of its own on anything else
    /// unforeseen).
    let until: Date
    let session: ActiveSession
    /// The `ath` every DPoP proof with this token must carry (``DPoPVerifier/ath(of:)``), for a bound session:
    /// hashed once per connection instead of once per proof.
    let ath: String?
    /// The assertion signed for `session`: its audience and the token.
    private let assertion: (audience: String, token: String)?

    init(
        authorization: String, source: Source, until: Date, session: ActiveSession, ath: String? = nil,
        assertion: (audience: String, token: String)? = nil
    ) {
        self.authorization = authorization
        self.source = source
        self.until = until
        self.session = session
        self.ath = ath
        self.assertion = assertion
    }

    /// The assertion kept for `audience`, if any.
    func assertion(for audience: String) -> String? {
        guard let assertion, assertion.audience == audience else { return nil }
        return assertion.token
    }

    /// The same memo with `token`, the assertion for `audience` reused until `reusedUntil`.
    func with(assertion token: String, audience: String, reusedUntil: Date) -> CredentialMemo {
        CredentialMemo(
            authorization: authorization, source: source, until: min(until, reusedUntil), session: session, ath: ath, assertion: (audience, token))
    }
}
