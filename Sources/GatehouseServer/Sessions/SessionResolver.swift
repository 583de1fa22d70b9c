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
///
/// A class of constants: the relay hands it to every decision made off the event loop, and a copy of its
/// members (the verifier, the session manager, their stores) was a retain each.
final class SessionResolver: Sendable {
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

    // MARK: Reading the credential

    /// The credential a request presents; `nil` when none. Throws for one that cannot be used as sent (a scheme
    /// that is not ours, a cookie without `X-CSRF` on an unsafe method): `invalid_session`, `csrf_required`.
    /// `target`: the request a DPoP proof must name (read only for `Authorization: DPoP`).
    func presented(_ headers: HTTPFields, method: HTTPRequest.Method, target: @autoclosure () -> DPoPVerifier.Target) throws -> PresentedCredential? {
        try presented(
            authorization: headers[.authorization], cookies: headers[values: .cookie], csrf: headers[Self.csrfHeader], method: method.rawValue,
            proofs: headers[values: DPoPVerifier.proofField], target: target())
    }

    /// The same over plain values, for front ends that hold other header types: the `Authorization` value, the
    /// `Cookie` values (read only without `Authorization`), the `X-CSRF` value, the method and the `DPoP` values.
    func presented(
        authorization: String?, cookies: @autoclosure () -> [String], csrf: @autoclosure () -> String?, method: String,
        proofs: @autoclosure () -> [String], target: @autoclosure () -> DPoPVerifier.Target
    ) throws -> PresentedCredential? {
        if let authorization {
            // The scheme, then the rest after one space: what `split(separator: " ", maxSplits: 1)` gives for every
            // ASCII value, without its array (every bound request reads its credential). Where a space and a
            // combining mark after it make one `Character`, the split found no space; a token starting with the mark
            // finds no session either.
            let utf8 = authorization.utf8
            guard let start = utf8.firstIndex(where: { $0 != UInt8(ascii: " ") }), let space = utf8[start...].firstIndex(of: UInt8(ascii: " ")),
                case let rest = utf8.index(after: space), rest != utf8.endIndex
            else {
                throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>'.")
            }
            let scheme = authorization[start..<space]
            let token = String(ASCII.trimmed(authorization[rest...]))
            if ASCII.equalsIgnoringCase(scheme, "bearer") {
                return PresentedCredential(token: token, presentation: .bearer, authorization: authorization, proofs: [], target: nil)
            }
            if ASCII.equalsIgnoringCase(scheme, "dpop") {
                return PresentedCredential(token: token, presentation: .dpop, authorization: authorization, proofs: proofs(), target: target())
            }
            throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>' or 'Authorization: DPoP <token>'.")
        }
        guard let cookie = self.cookies.token(in: cookies()) else { return nil }
        if !Self.safeMethods.contains(method), (csrf() ?? "").isEmpty {
            throw GatehouseError.forbidden(.csrfRequired, "A cookie-authenticated \(method) needs the X-CSRF header.")
        }
        return PresentedCredential(token: cookie, presentation: .cookie, authorization: nil, proofs: [], target: nil)
    }

    /// The request a proof sent to one of the gateway's own routes must name.
    func proofTarget(method: String, path: Substring) -> DPoPVerifier.Target {
        dpop.target(method: method, path: path)
    }

    // MARK: The credential: two entry points, one outcome

    /// What a request's credential gives from memory alone — the connection's `memo` while it holds (compared with
    /// the `Authorization` value as sent, before anything is parsed or hashed), the store's cache, a provider
    /// token's cached verdict, a proof whose key's verifier is kept — and the memo to keep for the connection (a
    /// `Bearer` or `DPoP` token, which a keep-alive client sends again byte for byte; with `DPoP` the memo stands
    /// for the token's look-up only, and every request's proof is checked); `nil` when the store must be read, a
    /// provider token verified or a proof's signature awaited: ask ``credential(_:providerTokens:)``. `presented`
    /// reads the credential (``presented(authorization:cookies:csrf:method:proofs:target:)``) when the memo does
    /// not answer or a proof is to be checked; what it throws is a refused credential. `providerGeneration` is the request's
    /// (``PolicySnapshot/providerGeneration``): a verdict or a memo made under other providers is not used. On the
    /// routes that take provider-issued tokens (`/v1/api/**`, `/v1/authz`).
    func credentialFromMemory(
        authorization: String?, memo: CredentialMemo?, now: Date, providerGeneration: UInt64, presented: () throws -> PresentedCredential?
    ) -> (credential: CredentialOutcome, memo: CredentialMemo?)? {
        var held: CredentialMemo?
        if let memo, let authorization, memo.authorization == authorization, now < memo.until, holds(memo.source, providerGeneration) {
            // A bearer session's memo answers before anything is parsed; a bound one's stands for the token's
            // look-up alone: this request's proof is checked all the same, below, and spent by the caller.
            guard memo.session.record.dpopThumbprint != nil else { return (.session(memo.session, proof: nil), memo) }
            held = memo
        }
        let read: PresentedCredential?
        do {
            read = try presented()
        } catch {
            return (.refused(error), nil)
        }
        guard let presented = read else { return (.none, nil) }
        if let held { return checkedNow(held.session, presented, memo: held) }
        // Hashed once: the session cache and the provider tokens' verdicts are both by the token's hash.
        let tokenHash = RandomToken.hash(presented.token)
        // `Authorization: Bearer` and `DPoP` (whose proof is still checked each time) are kept; a cookie is not.
        let keeps = presented.presentation != .cookie ? presented.authorization : nil
        // A JWT is never a session token (those have no dots): no session look-up for a provider's JWT.
        if presented.presentation != .bearer || !ProviderTokenAuthenticator.isJWT(presented.token) {
            // Read before the look-up: an eviction after it makes the memo stale at once.
            if let epoch = sessions.cacheEpoch, let (session, until) = sessions.cachedSession(tokenHash: tokenHash, now: now) {
                let memo = keeps.map {
                    CredentialMemo(
                        authorization: $0, source: .session(epoch: epoch), until: min(until, now.addingTimeInterval(1)), session: session,
                        ath: presented.presentation == .dpop && session.record.dpopThumbprint != nil ? DPoPVerifier.ath(of: presented.token) : nil)
                }
                return checkedNow(session, presented, memo: memo)
            }
        }
        guard presented.presentation == .bearer,
            let cached = providerTokens.cachedVerdict(tokenHash: tokenHash, now: now, generation: providerGeneration)
        else { return nil }
        switch cached.verdict {
        case .success(let session):
            let memo = keeps.map {
                CredentialMemo(
                    authorization: $0, source: .providerToken(generation: cached.generation), until: min(cached.until, now.addingTimeInterval(1)),
                    session: session)
            }
            return (.session(session, proof: nil), memo)
        case .failure(let refusal):
            return (.refused(refusal), nil)
        }
    }

    /// `session` with `presented`'s DPoP proof checked on the caller's thread (signature, htm/htu, iat, nonce, ath,
    /// the session's key; none is needed for a bearer session), and `memo` to keep; `nil` when the proof's signature
    /// must be awaited. A refused proof keeps no memo.
    private func checkedNow(
        _ session: ActiveSession, _ presented: PresentedCredential, memo: CredentialMemo?
    ) -> (credential: CredentialOutcome, memo: CredentialMemo?)? {
        do {
            guard case .some(let proof) = try dpop.checkWithoutWaiting(session, presented, ath: memo?.ath) else { return nil }
            return (.session(session, proof: proof), memo)
        } catch {
            return (.refused(error), nil)
        }
    }

    /// What `presented` gives, reading the store, verifying a provider-issued token (`providerTokens`: the route
    /// takes them) and checking a DPoP proof as needed. The proof is checked, not spent (``CredentialOutcome/session(_:proof:)``).
    func credential(_ presented: PresentedCredential?, providerTokens: Bool) async -> CredentialOutcome {
        guard let presented else { return .none }
        do {
            let session = try await providerTokens ? session(of: presented) : sessions.authenticate(token: presented.token)
            return .session(session, proof: try await dpop.check(session, presented))
        } catch {
            return .refused(error)
        }
    }

    /// The same from a request's header fields, for the router's routes that decide with a credential
    /// (`/v1/api/**`, `/v1/authz`): one that cannot be used as sent is `.refused`.
    func credential(
        _ headers: HTTPFields, method: HTTPRequest.Method, target: @autoclosure () -> DPoPVerifier.Target, providerTokens: Bool
    ) async -> CredentialOutcome {
        do {
            return await credential(try presented(headers, method: method, target: target()), providerTokens: providerTokens)
        } catch {
            return .refused(error)
        }
    }

    /// Records a checked proof's `jti`; a replay (here or on another instance) is refused with 401. The effect
    /// a front end carries out for a decision's proof (``CredentialOutcome/session(_:proof:)``).
    func spend(_ proof: DPoPProof) async throws {
        try await dpop.spend(proof, status: 401)
    }

    /// `credential` with its proof spent, for a front end that may wait before it decides (the rule of
    /// ``APIDecision/Plan``): the session without a proof to spend, or, when the proof was spent already (here or on
    /// another instance), the credential refused.
    func spent(_ credential: CredentialOutcome) async -> CredentialOutcome {
        guard case .session(let session, let proof?) = credential else { return credential }
        do {
            try await spend(proof)
            return .session(session, proof: nil)
        } catch {
            return .refused(error)
        }
    }

    /// The same, answered through `completion` (on the thread that finished the store's write, not a task).
    func spend(_ proof: DPoPProof, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        dpop.spend(proof, status: 401, completion: completion)
    }

    /// The same on the caller's thread when proofs are recorded in memory (`replay: instance`); `nil` when the
    /// store must record it.
    func spendWithoutWaiting(_ proof: DPoPProof) -> Result<Void, any Error>? {
        dpop.spendWithoutWaiting(proof, status: 401)
    }

    /// The session of a request to a route that needs one, its proof spent: ``presented(_:method:target:)``,
    /// ``credential(_:providerTokens:)`` and ``spend(_:)`` in one; throws `invalid_session` (none presented),
    /// `csrf_required`, `invalid_token`, `invalid_dpop_proof` or `use_dpop_nonce`. The proof names
    /// `public_url` + `path`.
    func resolve(_ headers: HTTPFields, method: HTTPRequest.Method, path: Substring) async throws -> (ActiveSession, Presentation) {
        guard let presented = try presented(headers, method: method, target: proofTarget(method: method.rawValue, path: path)) else {
            throw GatehouseError.invalidSession("No session token: send 'Authorization: Bearer <token>' or the session cookie.")
        }
        switch await credential(presented, providerTokens: false) {
        case .none: throw GatehouseError.invalidSession()
        case .refused(let error): throw error
        case .session(let session, let proof):
            if let proof { try await spend(proof) }
            return (session, presented.presentation)
        }
    }

    /// The session of the request's cookie alone, as the store has it (the browser routes that act on the browser's
    /// own session: sign-out, a step-up login); nil without a cookie or when its session is unknown or ended.
    /// Throws `invalid_token` for a key-bound session (it is taken only with its proof).
    func cookieSession(in headers: HTTPFields) async throws -> ActiveSession? {
        guard let token = cookies.token(in: headers[values: .cookie]), !token.isEmpty else { return nil }
        let presented = PresentedCredential(token: token, presentation: .cookie, authorization: nil, proofs: [], target: nil)
        let session: ActiveSession
        do {
            session = try await sessions.authenticate(token: token)
        } catch let error as GatehouseError where error.code == .invalidSession {
            return nil
        }
        _ = try await dpop.check(session, presented)
        return session
    }

    // MARK: Private

    /// Whether what a memo rests on still holds under the request's providers' generation.
    private func holds(_ source: CredentialMemo.Source, _ providerGeneration: UInt64) -> Bool {
        switch source {
        case .session(let epoch): epoch == sessions.cacheEpoch
        case .providerToken(let generation): generation == providerGeneration
        }
    }

    /// The session of a token on a route that takes provider-issued bearer tokens: a `Bearer` value that is not a
    /// session token is verified as a provider's (a JWT never is a session token; a `gths_` one always is; another
    /// opaque one, which may be a session token issued before the prefix, is first looked up in the store). Throws
    /// `invalid_session` when no provider accepts bearer tokens, else `invalid_token`, `insufficient_scope` or
    /// `provider_unavailable` for a provider token.
    private func session(of presented: PresentedCredential) async throws -> ActiveSession {
        let token = presented.token
        // A value of the gateway's own form is judged by the store alone: an ended or altered session token is 401
        // `invalid_session`, and never reaches a provider's introspection endpoint (``SessionToken``).
        guard presented.presentation == .bearer, !SessionToken.isPrefixed(token) else { return try await sessions.authenticate(token: token) }
        if let cached = providerTokens.cachedSession(token: token, now: sessions.clock.now()) { return try cached.get() }
        guard providerTokens.isEnabled else { return try await sessions.authenticate(token: token) }
        if ProviderTokenAuthenticator.isJWT(token) { return try await providerTokens.session(token: token) }
        do {
            return try await sessions.authenticate(token: token)
        } catch let error as GatehouseError where error.code == .invalidSession {
            return try await providerTokens.session(token: token)
        }
    }

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS"]
}
