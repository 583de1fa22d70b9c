public import Foundation
public import GatehouseCore

/// The `spid` adapter: Schibsted SPiD on top of the `oauth2` steps.
///
/// What differs from plain OAuth 2.0: the token response names the user (`user_id`, `is_admin`)
/// and tells SPiD's time (`server_time`), which gives the clock skew between SPiD and the gateway;
/// identity comes from `/api/2/me` inside the "SPP Container" envelope; API calls carry the token as
/// `oauth_token`; logout calls `/api/2/logout`, which also kills the refresh token, and the browser
/// can be sent to `/logout` to end SPiD's own session.
public struct SPiDProvider: RedirectLoginProvider, RefreshingProvider, RevokingProvider, BrowserLogoutProvider, APIErrorTranslating {
    public let descriptor: ProviderDescriptor
    public let configuration: Configuration
    let oauth2: OAuth2Provider
    let context: ProviderContext

    public init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext) {
        self.descriptor = descriptor
        self.configuration = configuration
        self.context = context
        self.oauth2 = OAuth2Provider(descriptor: descriptor, configuration: configuration.oauth2, context: context)
    }

    public var features: ProviderFeatures {
        ProviderFeatures(revocation: configuration.logoutEndpoint != nil, expiryKnown: true, userinfo: configuration.oauth2.userinfoEndpoint != nil)
    }

    /// SPiD's sign-out is its logout endpoint.
    public var revocationKey: String { "logout_endpoint" }

    // MARK: Login

    public func authorizationURL(for transaction: LoginTransaction) throws -> String {
        try oauth2.authorizationURL(for: transaction)
    }

    public func completeLogin(callback: [String: String], transaction: LoginTransaction) async throws -> LoginResult {
        let (response, credential) = try await oauth2.redeem(code: try oauth2.authorizationCode(from: callback), transaction: transaction)
        let adjusted = Self.correctedForClockSkew(credential, tokenResponse: response, receivedAt: context.clock.now())
        var claims = OAuth2Provider.tokenClaims(of: response)
        if let endpoint = configuration.oauth2.userinfoEndpoint {
            claims.merge(try await profile(endpoint: endpoint, credential: adjusted)) { old, new in
                // The token response's user_id stays the subject; the profile adds to it.
                old
            }
        }
        return LoginResult(identity: try oauth2.mapIdentity(claims), credential: adjusted)
    }

    // MARK: Refresh and logout

    public func refresh(_ credential: Credential) async throws -> Credential {
        let (response, renewed) = try await oauth2.renew(credential)
        return Self.correctedForClockSkew(renewed, tokenResponse: response, receivedAt: context.clock.now())
    }

    /// API logout: SPiD invalidates the token and the refresh token tied to it.
    public func revoke(_ credential: Credential) async throws {
        guard let endpoint = configuration.logoutEndpoint else { return }
        var outgoing = OutgoingRequest(url: endpoint, headers: [("Accept", "application/json")])
        attach(credential, to: &outgoing)
        let response = try await context.http.send(outgoing, unreachable: "SPiD logout endpoint unreachable")
        guard (200..<300).contains(response.status) else {
            let failure = SPPContainer(response.body)?.failure
            throw ProviderError.rejected(code: failure?.code ?? "http_\(response.status)", description: failure?.description ?? "SPiD logout failed.")
        }
    }

    /// SPiD's logout has no `state` of its own: it travels in `redirect_uri`'s query, which SPiD sends back as it is.
    public func browserLogoutURL(for credential: Credential, returnTo: String, state: String?) -> String? {
        guard let endpoint = configuration.browserLogoutEndpoint else { return nil }
        let target = state.map { FormEncoding.appending([("state", $0)], to: returnTo) } ?? returnTo
        return FormEncoding.appending([("client_id", configuration.oauth2.clientID), ("redirect_uri", target)], to: endpoint)
    }

    /// Tokens go where `api.auth` says (default: the `oauth_token` query parameter), never in two places.
    public func attach(_ credential: Credential, to request: inout OutgoingRequest) {
        (descriptor.api?.authentication ?? SPiDKind.defaultAPIAuthentication).attach(credential, to: &request)
    }

    // MARK: API errors

    public func problem(forAPIStatus status: Int, body: Data) -> GatehouseError? {
        guard let failure = SPPContainer(body)?.failure else { return nil }
        let code: ProblemCode
        switch failure.code {
        case "invalid_token", "expired_token": code = .providerTokenRejected
        case "insufficient_scope": code = .providerInsufficientScope
        default: code = .providerError
        }
        let gatewayStatus = status == 420 || status == 429 ? 429 : (status >= 500 ? 502 : status)
        return GatehouseError(code: code, status: gatewayStatus, detail: "SPiD answered \(status) (\(failure.code)).")
    }

    // MARK: Internals

    /// `/api/2/me` with the envelope unwrapped.
    func profile(endpoint: String, credential: Credential) async throws -> [String: JSONValue] {
        var outgoing = OutgoingRequest(url: endpoint, headers: [("Accept", "application/json")])
        attach(credential, to: &outgoing)
        let response = try await context.http.send(
            outgoing, unreachable: "SPiD profile endpoint unreachable", serverError: { "SPiD profile endpoint answered \($0)" })
        guard response.status == 200, let container = SPPContainer(response.body), container.failure == nil,
            let data = container.data?.objectValue
        else {
            throw ProviderError.invalidResponse("SPiD's /api/2/me answered \(response.status) without a user.")
        }
        return data
    }

    /// SPiD counts `expires_in` from its own clock (`server_time`): the expiry is that instant moved
    /// onto the gateway's clock, and the skew is kept for the session view.
    static func correctedForClockSkew(_ credential: Credential, tokenResponse: JSONValue, receivedAt: Date) -> Credential {
        guard let serverTime = tokenResponse["server_time"]?.doubleValue else { return credential }
        let skew = serverTime - receivedAt.timeIntervalSince1970
        var corrected = credential
        if let expiresIn = tokenResponse["expires_in"]?.doubleValue {
            corrected.expiresAt = Date(timeIntervalSince1970: serverTime + expiresIn - skew)
        }
        corrected.clockSkewSeconds = Int(skew.rounded())
        return corrected
    }
}
