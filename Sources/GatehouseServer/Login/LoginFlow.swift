import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import Prometheus

/// Owns every login from its start to its session: the login transaction (created, bound to its
/// browser, sealed and stored, consumed once), the one-time handoff code of a native client (issued,
/// redeemed once, replay revokes), and the session at the end. The only place that creates sessions.
///
/// Routes call it and return what it answers; no route seals, stores or consumes a login itself.
///
/// - Native clients (`redirect_uri` + PKCE, RFC 8252): the login ends with a redirect to the client's
///   URI carrying a handoff code (or an OAuth error), redeemed at `POST /v1/session`.
/// - Browsers (`return_to`): the login is bound to the starting browser (``LoginBinding``) and ends with
///   the session cookie and a redirect (or an error page).
/// - Posted credentials (assertion, token): no transaction; the session is created at once (201).
struct LoginFlow: Sendable {
    let settings: ServerSettings
    let sessions: SessionManager
    let metrics: GatewayMetrics
    let policy: CurrentPolicy

    private var store: any SessionStore { sessions.store }
    private var clock: TimeSource { sessions.clock }
    private var binding: LoginBinding { LoginBinding(settings: settings) }
    /// Device sign-ins (``DeviceController``), which a browser login marked for a device approves.
    var deviceAuthorizations: DeviceAuthorizations { DeviceAuthorizations(store: store, sealer: sessions.sealer, clock: clock) }

    /// Where a browser login comes back to, which decides the scope of its binding cookie.
    enum Channel: Sendable {
        /// `/v1/auth/{provider}/callback` (redirect logins).
        case callback
        /// `/v1/pages/{login}/…` (gateway-served login pages).
        case pages
    }

    /// A started login: its transaction, and the headers that bind a browser login to this browser.
    struct Started: Sendable {
        var transaction: LoginTransaction
        var headers: HTTPFields
    }

    // MARK: Start

    /// Starts a login from the client's query: native (`redirect_uri`, PKCE) or browser (`return_to`).
    /// `rawQuery` is the query as the client wrote it: its `state` goes back to the client unchanged.
    /// `acr_values` and `max_age` ask the provider for a stronger or fresher authentication (step-up, RFC 9470);
    /// a browser login with either replaces `current` — the starting browser's cookie session — in place when it
    /// signs in the same person at the same provider (``finish(_:transaction:_:asPage:logger:)``).
    func start(
        query: [String: String], rawQuery: String?, providerID: String, provider: any AuthProvider, channel: Channel,
        current: ActiveSession? = nil
    ) throws -> Started {
        var transaction = LoginTransaction(
            provider: providerID, state: RandomToken.make(), codeVerifier: PKCE.makeVerifier(), nonce: RandomToken.make(byteCount: 16),
            callbackURL: "\(settings.publicURL)/v1/auth/\(providerID)/callback", createdAt: clock.now())
        (transaction.acrValues, transaction.maxAge) = try Self.stepUp(query)
        if let redirectURI = query["redirect_uri"] {
            // Native app (RFC 8252): exact redirect URI, the client's own PKCE.
            let policy = RedirectURIPolicy(allowed: settings.allowedRedirectURIs + provider.descriptor.redirectURIs)
            guard policy.allows(redirectURI) else {
                throw GatehouseError.invalidRequest("redirect_uri is not on the allow-list of provider '\(providerID)'.")
            }
            guard let challenge = query["code_challenge"], !challenge.isEmpty else {
                throw GatehouseError.invalidRequest("code_challenge is required (PKCE, S256).")
            }
            guard query["code_challenge_method"] == "S256" else {
                throw GatehouseError.invalidRequest("code_challenge_method must be S256.")
            }
            guard PKCE.isValidChallenge(challenge) else {
                throw GatehouseError.invalidRequest("code_challenge is not an S256 challenge (43 base64url characters).")
            }
            transaction.clientRedirectURI = redirectURI
            transaction.clientCodeChallenge = challenge
            if let state = RawQueryParameter.value("state", in: rawQuery) {
                guard RawQueryParameter.isSafe(state) else {
                    throw GatehouseError.invalidRequest("state must be URL-encoded (RFC 3986 query characters, complete %-escapes).")
                }
                transaction.clientState = String(state)
            }
            return Started(transaction: transaction, headers: [:])
        }
        // Browser: the session becomes a cookie; a same-origin path to come back to, or an application's
        // origin that `access.return_to_origins` lists (forward authentication).
        let returnTo = query["return_to"] ?? "/"
        guard ReturnToPolicy.accepts(returnTo, access: policy.current.access) else {
            throw GatehouseError.invalidRequest("return_to must be a path on this gateway or a URL on an origin access.return_to_origins lists.")
        }
        transaction.returnTo = returnTo
        if transaction.stepUp != nil, let current, current.provider == providerID { transaction.replacesSession = current.id }
        let (secret, digest) = LoginBinding.make()
        transaction.browserBinding = digest
        var headers = HTTPFields()
        headers[.setCookie] = binding.setting(secret, loginID: transaction.state, scope: scope(of: transaction, channel))
        return Started(transaction: transaction, headers: headers)
    }

    /// `acr_values` (space-separated tokens, RFC 9470 §4) and `max_age` (seconds) of a login's query.
    static func stepUp(_ query: [String: String]) throws -> (acr: [String]?, maxAge: Int?) {
        var acr: [String]?
        if let text = query["acr_values"] {
            let values = text.split(separator: " ").map(String.init)
            // Plain tokens only: they go into the provider's query and, on a refusal, into a quoted challenge.
            guard !values.isEmpty, values.count <= 16,
                values.allSatisfy({ $0.utf8.count <= 256 && $0.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C } })
            else {
                throw GatehouseError.invalidRequest("acr_values must be up to 16 space-separated tokens of printable characters.")
            }
            acr = values
        }
        var maxAge: Int?
        if let text = query["max_age"] {
            guard let seconds = Int(text), seconds >= 0, seconds <= 10 * 365 * 86_400 else {
                throw GatehouseError.invalidRequest("max_age must be a number of seconds.")
            }
            maxAge = seconds
        }
        return (acr, maxAge)
    }

    /// Keeps a redirect login's transaction, sealed, until its callback (single use).
    func persist(_ transaction: LoginTransaction) async throws {
        try await store.insertPending(
            PendingRecord(
                keyHash: RandomToken.hash(transaction.state), purpose: .loginTransaction, provider: transaction.provider,
                payload: try sessions.sealer.seal(json: transaction),
                expiresAt: transaction.createdAt.addingTimeInterval(settings.loginTransactionLifetime)))
    }

    // MARK: Resume

    /// The transaction a callback's `state` names, consumed (a state works once), and checked to belong
    /// to the provider whose callback was called (mix-up defence, RFC 9700 §4.4).
    func resume(state: String?, providerID: String) async throws -> LoginTransaction {
        guard let state, !state.isEmpty else { throw GatehouseError.invalidRequest("The callback has no state.") }
        let consumption = try await store.consumePending(keyHash: RandomToken.hash(state), purpose: .loginTransaction, now: clock.now())
        guard case .first(let record) = consumption else {
            counted(providerID, "failed")
            throw GatehouseError.invalidRequest("Unknown, expired or already used state.")
        }
        let transaction = try sessions.sealer.open(json: LoginTransaction.self, from: record.payload)
        guard transaction.provider == providerID, record.provider == providerID else {
            counted(providerID, "failed")
            throw GatehouseError.invalidRequest("This state belongs to a login at another provider.")
        }
        return transaction
    }

    /// Nil when `request` may go on with this login: a native login, or the browser that started it
    /// (login CSRF, RFC 9700 §4.7). Otherwise the refusal to answer with; nothing is signed in.
    func refusal(_ request: Request, for transaction: LoginTransaction, _ channel: Channel, logger: Logger) -> Response? {
        guard transaction.clientRedirectURI == nil else { return nil }
        if binding.isBound(request, loginID: transaction.state, digest: transaction.browserBinding) { return nil }
        counted(transaction.provider, "refused")
        logger.notice("login refused: not bound to this browser", metadata: ["event": "login_refused", "provider": "\(transaction.provider)"])
        return binding.refusal(loginID: transaction.state, scope: scope(of: transaction, channel), requestID: ErrorPage.requestID(of: logger))
    }

    // MARK: End

    /// The end of an interactive login: a handoff code at the native client's redirect URI, or the
    /// session cookie and a redirect to `return_to` for a browser.
    func finish(
        _ result: LoginResult, transaction: LoginTransaction, _ channel: Channel, asPage: Bool = true, logger: Logger
    ) async throws -> Response {
        // `access.login`: ends like a provider's refusal, before any code or session exists.
        guard policy.current.access.permitsLogin(provider: transaction.provider, identity: result.identity) else {
            return try fail(Self.loginRefused, transaction: transaction, channel, asPage: asPage, logger: logger)
        }
        // A step-up login that did not get what it asked for ends here: coming back would only be refused again
        // (and a navigation sent to this login once more, in a loop).
        if let asked = transaction.stepUp {
            let now = clock.now()
            let authentication = result.identity.authentication(since: now)
            guard asked.isMet(acr: authentication.acr, authenticatedAt: authentication.authenticatedAt, now: now) else {
                return try fail(Self.stepUpNotMet, transaction: transaction, channel, asPage: asPage, logger: logger)
            }
        }
        if let clientRedirectURI = transaction.clientRedirectURI, let challenge = transaction.clientCodeChallenge {
            let code = RandomToken.make()
            let now = clock.now()
            let payload = HandoffPayload(
                provider: transaction.provider, clientRedirectURI: clientRedirectURI, clientCodeChallenge: challenge, result: result,
                expiresAt: now.addingTimeInterval(settings.handoffLifetime))
            // The record outlives the code's validity so that a late replay still revokes the session (RFC 6749 §4.1.2).
            try await store.insertPending(
                PendingRecord(
                    keyHash: RandomToken.hash(code), purpose: .handoffCode, provider: transaction.provider,
                    payload: try sessions.sealer.seal(json: payload),
                    expiresAt: now.addingTimeInterval(max(settings.handoffLifetime, settings.loginTransactionLifetime))))
            return clientRedirect(transaction, [("code", code)])
        }
        if let deviceHash = transaction.deviceCodeHash {
            return try await approveDevice(deviceHash, result: result, transaction: transaction, channel, asPage: asPage, logger: logger)
        }
        let token = try await browserSession(for: transaction, result: result, logger: logger)
        var headers = HTTPFields()
        headers[.setCookie] = SessionCookie(settings: settings).setting(token)
        headers.append(HTTPField(name: .setCookie, value: binding.clearing(loginID: transaction.state, scope: scope(of: transaction, channel))))
        return JSONResponse.redirect(to: transaction.returnTo ?? "/", status: .seeOther, headers: headers)
    }

    /// The end of a browser login made for a device: the device's sign-in is approved with the login's result
    /// (its session is created when the device takes it) and the browser gets a page, never a session cookie.
    private func approveDevice(
        _ deviceHash: String, result: LoginResult, transaction: LoginTransaction, _ channel: Channel, asPage: Bool, logger: Logger
    ) async throws -> Response {
        let now = clock.now()
        var headers = HTTPFields()
        headers[.setCookie] = binding.clearing(loginID: transaction.state, scope: scope(of: transaction, channel))
        guard try await deviceAuthorizations.update(deviceHash: deviceHash, { $0.approve(result, provider: transaction.provider, at: now) }) == true
        else {
            counted(transaction.provider, "failed")
            let problem = GatehouseError.invalidGrant("The device's sign-in has expired or was already answered. Start again on the device.")
            return ErrorPage.response(problem, requestID: ErrorPage.requestID(of: logger), headers: headers)
        }
        logger.notice(
            "device sign-in approved",
            metadata: ["event": "device_approved", "provider": "\(transaction.provider)", "subject": "\(result.identity.subject)"])
        // A page script that posted the capture navigates to the answer's `location`: the device page says it there.
        if !asPage { return JSONResponse.redirect(to: "/v1/device?signed_in=1", status: .seeOther, headers: headers) }
        return DevicePages.signedIn(headers: headers)
    }

    /// The session of an approved device sign-in, taken by the device's token call: 201 as `POST /v1/session`.
    func deviceSession(provider: String, result: LoginResult, dpopThumbprint: String?, logger: Logger) async throws -> Response {
        try await created(provider: provider, result: result, dpopThumbprint: dpopThumbprint, logger: logger)
    }

    /// The end of a login that failed after it started: the OAuth error at the native client's redirect
    /// URI, or, for a browser, an error page (`asPage`) or the problem thrown to the caller's script.
    func fail(_ failure: LoginFailure, transaction: LoginTransaction, _ channel: Channel, asPage: Bool = true, logger: Logger) throws -> Response {
        let refused = failure.problem.code == .accessDenied
        counted(transaction.provider, refused ? "refused" : "failed")
        logger.notice(
            refused ? "login refused" : "login failed",
            metadata: [
                "event": refused ? "login_refused" : "login_failed", "provider": "\(transaction.provider)", "reason": "\(failure.problem.code)",
            ])
        if transaction.clientRedirectURI != nil {
            return clientRedirect(transaction, [("error", failure.error.rawValue), ("error_description", failure.description)])
        }
        guard asPage else { throw failure.problem }
        var headers = HTTPFields()
        headers[.setCookie] = binding.clearing(loginID: transaction.state, scope: scope(of: transaction, channel))
        return ErrorPage.response(failure.problem, requestID: ErrorPage.requestID(of: logger), headers: headers)
    }

    /// A step-up login whose provider answered with another `acr` or an older authentication than asked.
    static let stepUpNotMet = LoginFailure(
        error: .accessDenied, description: "The provider did not authenticate as strongly or as recently as asked.",
        problem: GatehouseError.forbidden(.accessDenied, "The provider did not authenticate as strongly or as recently as this resource asks."))

    /// A login that `access.login` does not let in.
    static let loginRefused = LoginFailure(
        error: .accessDenied, description: "This account may not sign in here.",
        problem: GatehouseError.forbidden(.accessDenied, "This account may not sign in here."))

    // MARK: Sessions

    /// Creates the session of a finished login; returns its token (shown once).
    private func createSession(
        provider: String, result: LoginResult, id: String = RandomToken.make(byteCount: 16), dpopThumbprint: String? = nil, logger: Logger
    ) async throws -> (String, ActiveSession) {
        let created = try await sessions.create(provider: provider, result: result, id: id, dpopThumbprint: dpopThumbprint)
        metrics.logins.increment()
        metrics.login(provider: provider, outcome: "succeeded")
        logger.notice(
            "login succeeded",
            metadata: [
                "event": "login_succeeded", "provider": "\(provider)", "session": "\(id)", "subject": "\(result.identity.subject)",
                "bound": "\(dpopThumbprint != nil)",
            ])
        return created
    }

    /// The session a browser login ends in: a new one, or — a step-up of the same person at the same provider — the
    /// starting browser's session replaced in place (same id, new token, the new login's identity and credential).
    /// The old token ends with it, on every instance (as a sign-out ends it): a privilege change gets a new token.
    private func browserSession(for transaction: LoginTransaction, result: LoginResult, logger: Logger) async throws -> String {
        guard let replaced = transaction.replacesSession, let current = try await sessions.reload(id: replaced) else {
            return try await createSession(provider: transaction.provider, result: result, logger: logger).0
        }
        try await sessions.end(current.id)
        guard current.provider == transaction.provider, current.identity.subject == result.identity.subject else {
            // Someone else signed in on this browser: their own session; the one the browser held is over.
            logger.notice("session ended", metadata: ["event": "session_ended", "session": "\(current.id)", "reason": "another person signed in"])
            return try await createSession(provider: transaction.provider, result: result, logger: logger).0
        }
        logger.notice("session stepped up", metadata: ["event": "session_stepped_up", "session": "\(current.id)", "provider": "\(current.provider)"])
        return try await createSession(provider: transaction.provider, result: result, id: current.id, logger: logger).0
    }

    /// Counts a login that did not end in a session (`outcome`: `failed` or `refused`).
    private func counted(_ provider: String, _ outcome: String) {
        metrics.loginFailures.increment()
        metrics.login(provider: provider, outcome: outcome)
    }

    /// A credential the client posted (an assertion, a token), verified by `verify`: 201 with a new
    /// session (bound to the key of `dpopThumbprint` when given), or the adapter's refusal as a problem.
    func signIn(provider providerID: String, dpopThumbprint: String?, logger: Logger, verify: () async throws -> LoginResult) async throws -> Response
    {
        let result: LoginResult
        do {
            result = try await verify()
        } catch let error as ProviderError {
            let problem = ErrorMapping.credentialRefusal(error)
            counted(providerID, "refused")
            logger.notice("login refused", metadata: ["event": "login_refused", "provider": "\(providerID)", "reason": "\(problem.code)"])
            throw problem
        }
        guard policy.current.access.permitsLogin(provider: providerID, identity: result.identity) else {
            counted(providerID, "refused")
            logger.notice("login refused", metadata: ["event": "login_refused", "provider": "\(providerID)", "reason": "access.login"])
            throw Self.loginRefused.problem
        }
        return try await created(provider: providerID, result: result, dpopThumbprint: dpopThumbprint, logger: logger)
    }

    /// Redeems a handoff code: single use, bound to the client's PKCE challenge and redirect URI; 201
    /// with a new session. A second use revokes the session the first one created (RFC 6749 §4.1.2).
    /// `binding` is the outcome of the request's DPoP proof: the key's thumbprint, none, or its refusal,
    /// which is thrown only once the code is spent (RFC 9449 §5: a refused proof costs the code).
    func redeem(
        code: String, verifier: String, redirectURI: String, binding: Result<String?, GatehouseError>, logger: Logger
    ) async throws -> Response {
        switch try await store.consumePending(keyHash: RandomToken.hash(code), purpose: .handoffCode, now: clock.now()) {
        case .unknown:
            throw GatehouseError.invalidGrant("The code is unknown or expired.")
        case .replayed(let record):
            if let sessionID = record.sessionID {
                try await sessions.end(sessionID)
                logger.notice(
                    "session revoked", metadata: ["event": "session_revoked", "session": "\(sessionID)", "reason": "handoff code replayed"])
            }
            throw GatehouseError.invalidGrant("The code was already used; the session it created is revoked.")
        case .first(let record):
            let thumbprint = try binding.get()
            let payload = try sessions.sealer.open(json: HandoffPayload.self, from: record.payload)
            guard payload.expiresAt > clock.now() else { throw GatehouseError.invalidGrant("The code has expired.") }
            guard payload.clientRedirectURI == redirectURI else {
                throw GatehouseError.invalidGrant("redirect_uri does not match the one of the login.")
            }
            guard PKCE.verify(verifier, against: payload.clientCodeChallenge) else {
                throw GatehouseError.invalidGrant("code_verifier does not match the code_challenge.")
            }
            let sessionID = RandomToken.make(byteCount: 16)
            // Attach first, so a replay racing this request can always find the session to revoke.
            try await store.attachSession(sessionID, toPending: record.keyHash)
            return try await created(
                provider: payload.provider, result: payload.result, sessionID: sessionID, dpopThumbprint: thumbprint, logger: logger)
        }
    }

    private func created(
        provider: String, result: LoginResult, sessionID: String = RandomToken.make(byteCount: 16), dpopThumbprint: String?, logger: Logger
    ) async throws -> Response {
        let (token, session) = try await createSession(
            provider: provider, result: result, id: sessionID, dpopThumbprint: dpopThumbprint, logger: logger)
        let expiresIn = Int(session.record.expiresAt.timeIntervalSince(session.record.createdAt))
        let grant = SessionGrant(
            sessionToken: token, tokenType: dpopThumbprint == nil ? "Bearer" : "DPoP", expiresIn: expiresIn, session: SessionView(session))
        return try JSONResponse.make(grant, status: .created)
    }

    // MARK: Helpers

    private func scope(of transaction: LoginTransaction, _ channel: Channel) -> LoginBinding.Scope {
        switch channel {
        case .callback: .callback(provider: transaction.provider)
        case .pages: .pages(login: transaction.state)
        }
    }

    /// A redirect to the native client's URI with `fields` and its own `state`, byte for byte as it sent it.
    private func clientRedirect(_ transaction: LoginTransaction, _ fields: [(String, String)]) -> Response {
        var location = FormEncoding.appending(fields, to: transaction.clientRedirectURI ?? "/")
        if let clientState = transaction.clientState { location += "&state=" + clientState }
        return JSONResponse.redirect(to: location)
    }
}
