import Foundation
import GatehouseCore
import Synchronization

/// Turns a provider-issued access token, presented as `Authorization: Bearer` on `/v1/api/**` or `/v1/authz`,
/// into a session for that one request (``ActiveSession/Via/bearer``), or refuses it. Nothing is written to the
/// store: the session lives in the verdict cache (``ProviderTokenVerdicts``) until the earlier of the provider's
/// `cache_seconds` and the token's `exp`.
///
/// A JWT goes to the one accepting provider whose issuer is its `iss`; an opaque token is introspected by the
/// accepting providers that can, in order, until one says active. Refusals are 401 `invalid_token` with
/// `WWW-Authenticate: Bearer error="invalid_token"`; a valid token without a required scope is 403
/// `insufficient_scope` (RFC 6750 §3.1); a provider that could not be asked (and no other said
/// active) is 503 `provider_unavailable`. Concurrent requests with the same uncached token share one verification.
final class ProviderTokenAuthenticator: Sendable {
    let providers: ProviderSet
    let verdicts: ProviderTokenVerdicts
    let clock: TimeSource
    private let inFlight = Mutex<[String: Task<Result<ActiveSession, GatehouseError>, Never>]>([:])

    init(providers: ProviderSet, clock: TimeSource, verdicts: ProviderTokenVerdicts = ProviderTokenVerdicts()) {
        self.providers = providers
        self.verdicts = verdicts
        self.clock = clock
    }

    /// Whether some provider accepts bearer tokens at all (else a token is only ever a session token).
    var isEnabled: Bool {
        providers.all.contains { ($0 as? any BearerTokenProvider)?.acceptsBearerTokens == true }
    }

    /// Whether `token` has the shape of a compact JWS (three base64url parts): a Gatehouse session token never has.
    static func isJWT(_ token: String) -> Bool {
        token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2
    }

    /// The cached verdict on `token`, from memory alone; `nil` when it must be verified.
    func cachedSession(token: String, now: Date) -> Result<ActiveSession, GatehouseError>? {
        cachedVerdict(tokenHash: RandomToken.hash(token), now: now, generation: providers.generation)?.verdict
    }

    /// The cached verdict on the token whose hash (``RandomToken/hash(_:)``) is `tokenHash` if it was made under
    /// the providers' `generation` (the request's ``PolicySnapshot/providerGeneration``: a reload voids it), and
    /// until when it holds; `nil` when it must be verified.
    func cachedVerdict(
        tokenHash: String, now: Date, generation: UInt64
    ) -> (verdict: Result<ActiveSession, GatehouseError>, until: Date, generation: UInt64)? {
        guard let (verdict, until) = verdicts.entry(tokenHash: tokenHash, now: now, generation: generation) else { return nil }
        return (verdict, until, generation)
    }

    /// The session `token` stands for, verified (or from the cache); throws `invalid_token` or `provider_unavailable`.
    func session(token: String) async throws -> ActiveSession {
        let hash = RandomToken.hash(token)
        if let cached = verdicts.verdict(tokenHash: hash, now: clock.now(), generation: providers.generation) { return try cached.get() }
        let task = inFlight.withLock { inFlight in
            if let running = inFlight[hash] { return running }
            let task = Task { await self.verify(token, hash: hash) }
            inFlight[hash] = task
            return task
        }
        let result = await task.value
        inFlight.withLock { inFlight in
            if inFlight[hash] == task { inFlight.removeValue(forKey: hash) }
        }
        return try result.get()
    }

    /// One verification, its verdict cached (a provider that could not be asked is not a verdict).
    private func verify(_ token: String, hash: String) async -> Result<ActiveSession, GatehouseError> {
        // Read first: a reload during the verification makes its verdict stale at once.
        let generation = providers.generation
        let accepting = providers.all.compactMap { $0 as? any BearerTokenProvider }.filter(\.acceptsBearerTokens)
        var unavailable: String?
        var refusal = "The token is not one an accepting provider vouches for."
        var accepted: (provider: any BearerTokenProvider, grant: BearerTokenGrant)?
        // The provider's own valid token, short of scope: no other provider is asked, the answer is 403.
        var insufficient: [String]?
        if Self.isJWT(token) {
            let issuer = Self.unverifiedIssuer(of: token)
            if let issuer, let provider = accepting.first(where: { $0.bearerTokenIssuer == issuer }) {
                switch await provider.verifyBearerJWT(token) {
                case .accepted(let grant): accepted = (provider, grant)
                case .refused(let reason): refusal = reason
                case .insufficientScope(let required): insufficient = required
                case .unavailable(let reason): unavailable = reason
                }
            } else {
                refusal = "No provider accepts bearer tokens from this token's issuer."
            }
        } else if SessionToken.isPrefixed(token) {
            // The gateway's own form: never sent to a provider (``SessionResolver`` keeps it from here already).
            refusal = "The token has the form of a Gatehouse session token, not of a provider's."
        } else {
            for provider in accepting {
                guard let verdict = await provider.introspectBearerToken(token) else { continue }
                switch verdict {
                case .accepted(let grant): accepted = (provider, grant)
                case .refused(let reason): refusal = reason
                case .insufficientScope(let required): insufficient = required
                case .unavailable(let reason): unavailable = unavailable ?? reason
                }
                if accepted != nil || insufficient != nil { break }
            }
        }
        let now = clock.now()
        guard let (provider, grant) = accepted else {
            if let unavailable, insufficient == nil { return .failure(.providerUnavailable(unavailable)) }
            let error = insufficient.map(GatehouseError.insufficientScope) ?? GatehouseError.invalidBearerToken(refusal)
            verdicts.keep(
                .failure(error), tokenHash: hash, until: now.addingTimeInterval(ProviderTokenVerdicts.refusalLifetime), now: now,
                generation: generation)
            return .failure(error)
        }
        var until = now.addingTimeInterval(provider.bearerTokenCacheLifetime)
        if let expiresAt = grant.expiresAt { until = min(until, expiresAt) }
        let session = Self.session(token: token, hash: hash, provider: provider.descriptor.id, grant: grant, now: now, until: until)
        verdicts.keep(.success(session), tokenHash: hash, until: until, now: now, generation: generation)
        return .success(session)
    }

    /// A session made for a verified token: never stored; its id names the token's hash, not the token.
    static func session(token: String, hash: String, provider: String, grant: BearerTokenGrant, now: Date, until: Date) -> ActiveSession {
        let record = SessionRecord(
            id: "bearer-" + hash.prefix(16), tokenHash: hash, provider: provider, subject: grant.identity.subject, identity: Data(),
            sealedCredential: Data(), createdAt: now, lastSeenAt: now, expiresAt: max(until, now))
        let credential = Credential(accessToken: token, tokenType: "Bearer", expiresAt: grant.expiresAt, issuedAt: now, scope: grant.scope)
        return ActiveSession(record: record, identity: grant.identity, credential: credential, via: .bearer)
    }

    /// A JWT's `iss`, read before verification only to choose the provider that verifies it.
    static func unverifiedIssuer(of token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(parts[1])) else { return nil }
        return JSONValue.parse(payload)?["iss"]?.stringValue
    }
}
