import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Turns the credentials of a request into its session, or refuses.
///
/// The token comes from `Authorization: Bearer …` (native clients), `Authorization: DPoP …` with a proof
/// (native clients whose session is bound to their key, ``DPoPVerifier``) or from the session cookie
/// (browsers). With the cookie, unsafe methods must carry `X-CSRF`, which browsers send only same-origin or
/// after a CORS preflight. A plain type over header fields, so that any front end (the router's
/// ``SessionMiddleware``, a channel handler on the hot path) resolves sessions the same way.
///
/// On the routes that take them (`/v1/api/**`, `/v1/authz`: `providerTokens: true`), a `Bearer` value that is
/// not a Gatehouse session token is tried as a provider-issued access token (``ProviderTokenAuthenticator``);
/// a verified one is a session for that request alone (``ActiveSession/Via/bearer``).
struct SessionResolver: Sendable {
    static let csrfHeader = HTTPField.Name("X-CSRF")!
    let cookieName: String
    let sessions: SessionManager
    let dpop: DPoPVerifier
    /// The one reader of the session cookie (the forwarding rule strips it with the same one).
    let cookies: SessionCookieParser
    /// Provider-issued bearer tokens (`bearer_tokens:` of the provider files).
    let providerTokens: ProviderTokenAuthenticator

    init(cookieName: String, sessions: SessionManager, dpop: DPoPVerifier, providerTokens: ProviderTokenAuthenticator) {
        self.cookieName = cookieName
        self.sessions = sessions
        self.dpop = dpop
        self.providerTokens = providerTokens
        cookies = SessionCookieParser(name: cookieName)
    }

    /// How the request presented its session token.
    enum Presentation: Sendable, Equatable {
        case bearer
        /// `Authorization: DPoP`: a key-bound session, with a proof.
        case dpop
        case cookie
    }

    /// The session of a request to one of the gateway's own routes (the proof names `public_url` + `path`);
    /// throws `invalid_session`, `csrf_required`, `invalid_token`, `invalid_dpop_proof` or `use_dpop_nonce`.
    /// `providerTokens`: the route takes provider-issued bearer tokens (`/v1/api/**`), which may also throw
    /// `provider_unavailable`.
    func resolve(
        _ headers: HTTPFields, method: HTTPRequest.Method, path: Substring, providerTokens: Bool = false
    ) async throws -> (ActiveSession, Presentation) {
        try await resolve(headers, method: method, proofTarget: proofTarget(method: method.rawValue, path: path), providerTokens: providerTokens)
    }

    /// The same, for a proof that names another request than this one (`/v1/authz`: the original request).
    func resolve(
        _ headers: HTTPFields, method: HTTPRequest.Method, proofTarget: DPoPVerifier.Target, providerTokens: Bool = false
    ) async throws -> (ActiveSession, Presentation) {
        let (token, presentation) = try token(in: headers, method: method)
        let session = try await (providerTokens ? session(token: token, presentation: presentation) : session(token: token))
        if let proof = try await check(session, token: token, presentation: presentation, proofs: headers[values: DPoPVerifier.proofField], target: proofTarget) {
            try await spend(proof)
        }
        return (session, presentation)
    }

    // MARK: The steps, for front ends that carry them out themselves (the event-loop relay)

    /// The session of `token` from memory alone, and until when that answer holds unless the store's cache
    /// evicts something (``cacheEpoch``); `nil` when the store must be read. A session bound to a key is never
    /// answered from memory: its proof is checked with ``check(_:token:presentation:proofs:target:)``.
    func cachedSession(token: String, now: Date) -> (session: ActiveSession, until: Date)? {
        guard !token.isEmpty else { return nil }
        return cachedSession(tokenHash: RandomToken.hash(token), now: now)
    }

    /// The same by the token's hash (``RandomToken/hash(_:)``): hashed once for this and a provider token's
    /// verdict (``cachedProviderVerdict(tokenHash:now:)``).
    func cachedSession(tokenHash: String, now: Date) -> (session: ActiveSession, until: Date)? {
        guard let found = sessions.cachedSession(tokenHash: tokenHash, now: now), found.session.record.dpopThumbprint == nil else { return nil }
        return found
    }

    /// The session of a token presented as `Authorization: DPoP` from memory alone, bound or not (the proof
    /// decides, ``checkWithoutWaiting(_:token:presentation:proofs:target:)``); `nil` when the store must be read.
    func cachedSessionForProof(token: String, now: Date) -> ActiveSession? {
        sessions.cachedSession(token: token, now: now)?.session
    }

    /// ``check(_:token:presentation:proofs:target:)`` on the caller's thread: `.some(proof)`, or `nil` when
    /// the proof's signature must be awaited.
    func checkWithoutWaiting(
        _ session: ActiveSession, token: String, presentation: Presentation, proofs: [String], target: DPoPVerifier.Target
    ) throws -> DPoPProof?? {
        try dpop.checkWithoutWaiting(session, token: token, presentation: presentation, proofs: proofs, target: target)
    }

    /// The store cache's eviction epoch (``CachedSessionLookup/evictionEpoch``); `nil` without one.
    var cacheEpoch: UInt64? { sessions.cacheEpoch }

    /// The session of `token` from the store: `invalid_session` when unknown, idle too long or past its end.
    func session(token: String) async throws -> ActiveSession {
        try await sessions.authenticate(token: token)
    }

    /// The same on a route that takes provider-issued bearer tokens: a `Bearer` value that is not a session
    /// token is verified as a provider's (a JWT never is a session token; a `gths_` one always is; another opaque
    /// one, which may be a session token issued before the prefix, is first looked up in the store). Throws
    /// `invalid_session` as ``session(token:)`` does when no provider accepts bearer tokens, else `invalid_token`,
    /// `insufficient_scope` or `provider_unavailable` for a provider token.
    func session(token: String, presentation: Presentation) async throws -> ActiveSession {
        // A value of the gateway's own form is judged by the store alone: an ended or altered session token is 401
        // `invalid_session`, and never reaches a provider's introspection endpoint (``SessionToken``).
        guard presentation == .bearer, !SessionToken.isPrefixed(token) else { return try await session(token: token) }
        if let cached = providerTokens.cachedSession(token: token, now: sessions.clock.now()) { return try cached.get() }
        guard providerTokens.isEnabled else { return try await session(token: token) }
        if ProviderTokenAuthenticator.isJWT(token) { return try await providerTokens.session(token: token) }
        do {
            return try await session(token: token)
        } catch let error as GatehouseError where error.code == .invalidSession {
            return try await providerTokens.session(token: token)
        }
    }

    /// A provider-issued token's cached verdict by the token's hash (it must have come as `Bearer`), until when
    /// it holds and under which providers' generation (``providerGeneration``); `nil`: not cached.
    func cachedProviderVerdict(tokenHash: String, now: Date) -> (verdict: Result<ActiveSession, GatehouseError>, until: Date, generation: UInt64)? {
        providerTokens.cachedVerdict(tokenHash: tokenHash, now: now)
    }

    /// The providers' generation now: a provider token's verdict holds only under the one it was made under.
    var providerGeneration: UInt64 { providerTokens.generation }

    /// Whether the session may be used as it was presented (a bound one only as `Authorization: DPoP` with
    /// a proof of `target` by its key); the proof to ``spend(_:)`` once the request is sure to go on.
    func check(_ session: ActiveSession, token: String, presentation: Presentation, proofs: [String], target: DPoPVerifier.Target) async throws -> DPoPProof? {
        try await dpop.check(session, token: token, presentation: presentation, proofs: proofs, target: target)
    }

    /// Records a checked proof's `jti`; a replay (here or on another instance) is refused with 401.
    func spend(_ proof: DPoPProof) async throws {
        try await dpop.spend(proof, status: 401)
    }

    /// The same, answered through `completion` (on the thread that finished the store's write, not a task).
    func spend(_ proof: DPoPProof, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        dpop.spend(proof, status: 401, completion: completion)
    }

    /// The request a proof sent to one of the gateway's own routes must name.
    func proofTarget(method: String, path: Substring) -> DPoPVerifier.Target {
        dpop.target(method: method, path: path)
    }

    /// The token a request presents and how.
    func token(in headers: HTTPFields, method: HTTPRequest.Method) throws -> (String, Presentation) {
        try token(
            authorization: headers[.authorization], cookies: headers[values: .cookie], csrf: headers[Self.csrfHeader],
            method: method.rawValue)
    }

    /// The same over plain values, for front ends that hold other header types: the `Authorization` value,
    /// the `Cookie` values, the `X-CSRF` value and the method.
    func token(
        authorization: String?, cookies: @autoclosure () -> [String], csrf: @autoclosure () -> String?, method: String
    ) throws -> (String, Presentation) {
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else {
                throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>'.")
            }
            if ASCII.equalsIgnoringCase(parts[0], "bearer") { return (String(ASCII.trimmed(parts[1])), .bearer) }
            if ASCII.equalsIgnoringCase(parts[0], "dpop") { return (String(ASCII.trimmed(parts[1])), .dpop) }
            throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>' or 'Authorization: DPoP <token>'.")
        }
        if let cookie = self.cookies.token(in: cookies()) {
            if !Self.safeMethods.contains(method), (csrf() ?? "").isEmpty {
                throw GatehouseError.forbidden(.csrfRequired, "A cookie-authenticated \(method) needs the X-CSRF header.")
            }
            return (cookie, .cookie)
        }
        throw GatehouseError.invalidSession("No session token: send 'Authorization: Bearer <token>' or the session cookie.")
    }

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS"]
}
