import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// Device sign-in for command-line clients (RFC 8628's shape), under `/v1/device`:
///
/// - `POST /v1/device/authorize` (form: `provider`, optional; a DPoP proof binds the session to come): a
///   device code for the device, a user code for the person.
/// - `GET /v1/device[?user_code=…]`: the page where the person types the code (at most
///   ``DeviceAttemptLimiter/limit`` wrong codes per browser per minute), then sees what asks.
/// - `POST /v1/device` (form: `user_code`, `csrf`, `action` = `approve` with a `provider`, or `deny`): the
///   login's CSRF rules — the request's origin must be the gateway's, and `csrf` must be derived from this
///   browser's device cookie. Approving starts a browser login at the provider (``LoginFlow``) marked for the
///   device; it ends with a page, not a session cookie.
/// - `POST /v1/device/token`: RFC 8628 §3.4–3.5; once approved, 201 with a session as `POST /v1/session` answers.
struct DeviceController: Sendable {
    let providers: ProviderSet
    let flow: LoginFlow
    /// Page logins (`acs`, `capture`), which a confirmation starts for those kinds.
    let pages: LoginPageController
    let dpop: DPoPVerifier
    let settings: ServerSettings
    let limiter: DeviceAttemptLimiter

    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"
    private static let maxBodyBytes = 16 * 1024

    private var authorizations: DeviceAuthorizations { flow.deviceAuthorizations }
    private var clock: TimeSource { flow.sessions.clock }
    private var device: GatewayConfiguration.Device { settings.configuration.device }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        guard device.enabled else { return }
        router.post("/v1/device/authorize") { request, context in try await answering { try await authorize(request, context) } }
        router.post("/v1/device/token") { request, context in try await answering { try await token(request, context) } }
        router.get("/v1/device") { request, context in try await page(request, context) }
        router.post("/v1/device") { request, context in try await confirm(request, context) }
    }

    // MARK: The device's side

    private func authorize(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let form = try await RequestBodyReader.form(from: request, limit: Self.maxBodyBytes)
        var providerID = form["provider"]
        if providerID?.isEmpty == true { providerID = nil }
        if let providerID {
            guard let provider = providers.provider(providerID) else { throw DeviceGrantError.invalidRequest("Unknown provider '\(providerID)'.") }
            guard Self.signsInInBrowser(provider) else {
                throw DeviceGrantError.invalidRequest("Provider '\(providerID)' has no browser sign-in; a device sign-in cannot use it.")
            }
        }
        let thumbprint = try await dpop.bindingForSignIn(
            proofs: request.headers[values: DPoPVerifier.proofField], target: dpop.target(method: "POST", path: Substring(request.uri.path)))
        let deviceCode = RandomToken.make()
        let userCode = UserCode.make()
        let lifetime = TimeInterval(device.codeLifetimeSeconds)
        let authorization = DeviceAuthorization(
            userCodeHash: UserCode.hash(UserCode.normalize(userCode) ?? userCode), provider: providerID, dpopThumbprint: thumbprint,
            clientAddress: clientAddress(request, context), requestedAt: clock.now(), lifetime: lifetime, interval: device.intervalSeconds)
        try await authorizations.create(authorization, deviceCode: deviceCode, userCode: userCode, lifetime: lifetime)
        context.logger.notice(
            "device sign-in requested", metadata: ["event": "device_authorized", "provider": "\(providerID ?? "")", "bound": "\(thumbprint != nil)"])
        let verification = settings.publicURL + "/v1/device"
        var response = try JSONResponse.make(
            DeviceCodeAnswer(
                deviceCode: deviceCode, userCode: userCode, verificationURI: verification,
                verificationURIComplete: verification + "?user_code=" + userCode, expiresIn: device.codeLifetimeSeconds,
                interval: device.intervalSeconds))
        if let nonce = dpop.freshNonce() { response.headers[DPoPVerifier.nonceField] = nonce }
        return response
    }

    private func token(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let form = try await RequestBodyReader.form(from: request, limit: Self.maxBodyBytes)
        guard let grantType = form["grant_type"], !grantType.isEmpty else { throw DeviceGrantError.invalidRequest("grant_type is required.") }
        guard grantType == Self.grantType else {
            throw DeviceGrantError(error: "unsupported_grant_type", errorDescription: "grant_type must be \(Self.grantType).")
        }
        guard let deviceCode = form["device_code"], !deviceCode.isEmpty else { throw DeviceGrantError.invalidRequest("device_code is required.") }
        let deviceHash = RandomToken.hash(deviceCode)
        guard let current = try await authorizations.authorization(deviceHash: deviceHash)?.authorization else {
            throw DeviceGrantError.invalidGrant("The device code is unknown or was already used.")
        }
        // A bound sign-in answers only the key that asked for it; the proof is checked before the poll counts.
        if let expected = current.dpopThumbprint {
            let proofs = request.headers[values: DPoPVerifier.proofField]
            guard !proofs.isEmpty else {
                throw DeviceGrantError(error: "invalid_dpop_proof", errorDescription: "This device code was requested with a DPoP key: prove it.")
            }
            let thumbprint = try await dpop.bindingForSignIn(
                proofs: proofs, target: dpop.target(method: "POST", path: Substring(request.uri.path)))
            guard let thumbprint, ConstantTime.equal(Data(thumbprint.utf8), Data(expected.utf8)) else {
                throw DeviceGrantError(
                    error: "invalid_dpop_proof", errorDescription: "The DPoP proof is not made with the key of the authorize call.")
            }
        }
        let now = clock.now()
        guard let outcome = try await authorizations.update(deviceHash: deviceHash, { $0.poll(at: now) }) else {
            throw DeviceGrantError.invalidGrant("The device code is unknown or was already used.")
        }
        switch outcome {
        case .authorizationPending:
            throw DeviceGrantError(error: "authorization_pending", errorDescription: "The person has not signed in yet.")
        case .slowDown:
            throw DeviceGrantError(error: "slow_down", errorDescription: "Polled sooner than the interval; it is now 5 seconds longer.")
        case .accessDenied:
            throw DeviceGrantError(error: "access_denied", errorDescription: "The person denied the sign-in.")
        case .expiredToken:
            throw DeviceGrantError(error: "expired_token", errorDescription: "The device code has expired; start again.")
        case .approved(let result, let provider):
            // The one use: a second token call (here or on another instance) finds the record consumed.
            guard try await authorizations.consume(deviceHash: deviceHash) else {
                throw DeviceGrantError.invalidGrant("The device code was already used.")
            }
            var response = try await flow.deviceSession(
                provider: provider, result: result, dpopThumbprint: current.dpopThumbprint, logger: context.logger)
            if let nonce = dpop.freshNonce() { response.headers[DPoPVerifier.nonceField] = nonce }
            return response
        }
    }

    /// Runs a device endpoint, answering its refusals in RFC 8628's `{"error": …}` form.
    private func answering(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as DeviceGrantError {
            return error.response
        } catch let problem as GatehouseError {
            guard let error = DeviceGrantError.from(problem) else { throw problem }
            return error.response
        }
    }

    // MARK: The person's side

    private func page(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let (browser, cookieHeaders) = browserID(request)
        // Where a page login's script lands at the end (``LoginFlow``): only words, nothing is read or changed.
        if request.uri.queryParameters.get("signed_in") != nil, request.uri.queryParameters.get("user_code") == nil {
            return DevicePages.signedIn(headers: cookieHeaders)
        }
        // A form's GET writes spaces as `+`, which the query's reading leaves as they are.
        guard let typed = request.uri.queryParameters.get("user_code")?.replacingOccurrences(of: "+", with: " ") else {
            return DevicePages.entry(headers: cookieHeaders)
        }
        let now = clock.now()
        // A request without the cookie (a fresh browser, or a script that drops it) is counted by its address instead.
        let counted = cookieHeaders.isEmpty ? browser : "address:" + clientAddress(request, context)
        guard limiter.allows(counted, now: now) else {
            context.logger.notice("device code refused: too many wrong codes", metadata: ["event": "device_code_limited"])
            var headers = cookieHeaders
            headers[.retryAfter] = String(Int(limiter.window))
            return DevicePages.entry(
                message: "Too many wrong codes from this browser. Wait a minute, then try again.", status: .tooManyRequests, headers: headers)
        }
        guard let normalized = UserCode.normalize(typed), let found = try await authorizations.find(userCode: normalized),
            found.authorization.state == .pending
        else {
            limiter.failed(counted, now: now)
            return DevicePages.entry(
                message: "That code is not valid (wrong, expired or already used).", status: .badRequest, headers: cookieHeaders)
        }
        let asked = found.authorization.provider
        let choices = providers.all.filter { Self.signsInInBrowser($0) && (asked == nil || $0.descriptor.id == asked) }
            .map { DevicePages.ProviderChoice(id: $0.descriptor.id, name: $0.descriptor.name) }
        return DevicePages.confirmation(
            userCode: UserCode.display(normalized), authorization: found.authorization, providers: choices,
            csrf: csrf(browser: browser, deviceHash: found.deviceHash), headers: cookieHeaders)
    }

    private func confirm(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        try checkOrigin(request.headers)
        let form = try await RequestBodyReader.form(from: request, limit: Self.maxBodyBytes)
        guard let browser = request.cookies[cookieName]?.value, !browser.isEmpty, let normalized = form["user_code"].flatMap(UserCode.normalize),
            let found = try await authorizations.find(userCode: normalized), found.authorization.state == .pending,
            let sent = form["csrf"], ConstantTime.equal(Data(sent.utf8), Data(csrf(browser: browser, deviceHash: found.deviceHash).utf8))
        else {
            throw GatehouseError.forbidden(.csrfRequired, "This confirmation was not shown to this browser, or the code is no longer valid.")
        }
        let (deviceHash, authorization) = found
        let now = clock.now()
        switch form["action"] {
        case "deny":
            _ = try await authorizations.update(deviceHash: deviceHash) { $0.deny(at: now) }
            context.logger.notice("device sign-in denied", metadata: ["event": "device_denied"])
            return DevicePages.done(title: "Sign-in denied", message: "The device was not signed in. You can close this page.")
        case "approve":
            guard let providerID = form["provider"], authorization.provider == nil || authorization.provider == providerID,
                let provider = providers.provider(providerID), Self.signsInInBrowser(provider)
            else {
                throw GatehouseError.invalidRequest("Choose one of the providers the page offers.")
            }
            if let pageProvider = provider as? any LoginPageProvider {
                var started = try flow.start(query: ["return_to": "/"], rawQuery: nil, providerID: providerID, provider: provider, channel: .pages)
                started.transaction.deviceCodeHash = deviceHash
                return try await pages.begin(started, providerID: providerID, provider: pageProvider, context)
            }
            guard let redirectProvider = provider as? any RedirectLoginProvider else {
                throw GatehouseError.invalidRequest("Choose one of the providers the page offers.")
            }
            var started = try flow.start(query: ["return_to": "/"], rawQuery: nil, providerID: providerID, provider: provider, channel: .callback)
            started.transaction.deviceCodeHash = deviceHash
            try await flow.persist(started.transaction)
            return JSONResponse.redirect(
                to: try redirectProvider.authorizationURL(for: started.transaction), status: .seeOther, headers: started.headers)
        default:
            throw GatehouseError.invalidRequest("action must be approve or deny.")
        }
    }

    /// Whether a person signs in with `provider` in a browser: redirect kinds and gateway-served login pages
    /// (`acs`, `capture`); not `browserid`, whose assertion a client posts.
    static func signsInInBrowser(_ provider: any AuthProvider) -> Bool {
        provider is any RedirectLoginProvider || provider is any LoginPageProvider
    }

    // MARK: The browser

    /// The name of the cookie that tells browsers apart on the page (the wrong-code count, the CSRF token).
    private var cookieName: String { (settings.cookie.secure ? "__Secure-" : "") + "gatehouse_device" }

    /// This browser's id, and the `Set-Cookie` that gives it one when it had none.
    private func browserID(_ request: Request) -> (String, HTTPFields) {
        if let value = request.cookies[cookieName]?.value, !value.isEmpty, value.utf8.count <= 64 { return (value, [:]) }
        let id = RandomToken.make(byteCount: 16)
        var parts = ["\(cookieName)=\(id)", "HttpOnly", "Path=/v1/device", "SameSite=Lax", "Max-Age=3600"]
        if settings.cookie.secure { parts.append("Secure") }
        var headers = HTTPFields()
        headers[.setCookie] = parts.joined(separator: "; ")
        return (id, headers)
    }

    /// The client's address: the peer's, or behind `trusted_proxies` the client they name (as the access log and
    /// `X-Real-IP` find it).
    private func clientAddress(_ request: Request, _ context: GatehouseRequestContext) -> String {
        ForwardedFields.clientAddress(
            chain: ForwardedFields.joined(request.headers[values: Self.xForwardedFor]), peer: context.remoteAddress, proxies: settings.trustedProxies)
            ?? "unknown"
    }

    private static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The confirmation's CSRF token: only a page shown to this browser for this sign-in carries it.
    private func csrf(browser: String, deviceHash: String) -> String {
        RandomToken.hash("device-confirm:" + browser + ":" + deviceHash)
    }

    /// A confirmation is accepted from the gateway's own pages only: its `Origin`, or without one, a browser
    /// saying the request is same-origin (as `POST /v1/sign-out`).
    private func checkOrigin(_ headers: HTTPFields) throws {
        if let sent = headers[.origin] {
            guard let origin = WebOrigin.of(sent), origin == WebOrigin.of(settings.publicURL) else {
                throw GatehouseError.forbidden(.csrfRequired, "POST /v1/device is accepted only from the gateway's own origin.")
            }
            return
        }
        guard let site = headers[SignOutController.secFetchSite], ASCII.equalsIgnoringCase(site, "same-origin") else {
            throw GatehouseError.forbidden(.csrfRequired, "POST /v1/device needs the gateway's Origin (or Sec-Fetch-Site: same-origin).")
        }
    }
}
