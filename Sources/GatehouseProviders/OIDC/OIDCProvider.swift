import Foundation
public import GatehouseCore

/// The `oidc` adapter: OpenID Connect on top of the `oauth2` steps.
///
/// What it adds: endpoints from the issuer's discovery document (cached, overridable; those that receive
/// secrets or give keys must be https, ``InsecureHTTPPolicy``), a `nonce` in the authorization request,
/// ID tokens verified against the provider's JWKS (OIDC Core §3.1.3.7), RFC 9207 `iss` by the `oauth2`
/// rules (``AuthorizationResponseIssuer``: required when advertised or once seen), userinfo merged with
/// the ID token's claims (same `sub`), an unchanged `sub` on refresh, RP-initiated logout and RFC 7009
/// revocation when advertised.
public struct OIDCProvider: RedirectLoginProvider, RefreshingProvider, RevokingProvider, BrowserLogoutProvider, ReadinessReporting {
    public let descriptor: ProviderDescriptor
    public let configuration: Configuration
    let context: ProviderContext
    let discovery: OIDCDiscovery
    let keys: JWKSCache
    let validator: OIDCIDTokenValidator
    /// The RFC 9207 `iss` check, kept across the per-call `oauth2` adapters so that what it saw is remembered.
    let responseIssuer = AuthorizationResponseIssuer()
    /// `bearer_tokens:` when accepted (``BearerTokenProvider``), sharing the ID tokens' key cache; `nil` otherwise.
    let bearerTokens: ProviderBearerTokens?

    public init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext) {
        self.descriptor = descriptor
        self.configuration = configuration
        self.context = context
        self.discovery = OIDCDiscovery(configuration: configuration, context: context)
        self.keys = JWKSCache(context: context, forcedRefetchInterval: configuration.jwksRefetchInterval)
        self.validator = OIDCIDTokenValidator(configuration: configuration, keys: keys, clock: context.clock)
        self.bearerTokens =
            configuration.bearerTokens.accept
            ? ProviderBearerTokens(
                settings: configuration.bearerTokens, fileClaims: descriptor.claims, keys: keys, context: context, clockSkew: configuration.clockSkew)
            : nil
    }

    public var features: ProviderFeatures {
        let metadata = discovery.cached
        return ProviderFeatures(
            revocation: (metadata?.revocationEndpoint ?? configuration.revocationEndpoint) != nil, expiryKnown: true,
            userinfo: (metadata?.userinfoEndpoint ?? configuration.userinfoEndpoint) != nil)
    }

    /// Discovery may name the revocation endpoint: only a started gateway can tell (its start-up warning).
    public var revocationDecidedByFile: Bool { configuration.revocationEndpoint != nil }

    /// Ready once a discovery document with the configured issuer was fetched.
    public var readiness: ProviderReadiness {
        get async {
            do {
                _ = try await discovery.current()
                return .ready
            } catch let error as ProviderError {
                return .notReady(Self.reason(error))
            } catch {
                return .notReady("discovery failed")
            }
        }
    }

    // MARK: Login

    /// Needs a discovery document: the server asks for ``readiness`` first, which fetches it.
    public func authorizationURL(for transaction: LoginTransaction) throws -> String {
        guard let metadata = discovery.cached else {
            throw ProviderError.unavailable("The provider's discovery document is not available yet.")
        }
        return try oauth2(
            metadata, extraAuthorizationParameters: Self.authorizationParameters(configuration.authorizationParameters, for: transaction)
        )
        .authorizationURL(for: transaction)
    }

    /// The file's `authorization_params`, a step-up's `acr_values` and `max_age` in place of the file's (OIDC Core
    /// §3.1.2.1), and the nonce.
    static func authorizationParameters(_ configured: [(String, String)], for transaction: LoginTransaction) -> [(String, String)] {
        var stepUp: [(String, String)] = []
        if let acr = transaction.acrValues { stepUp.append(("acr_values", acr.joined(separator: " "))) }
        if let maxAge = transaction.maxAge { stepUp.append(("max_age", String(maxAge))) }
        let asked = Set(stepUp.map(\.0))
        return configured.filter { !asked.contains($0.0) } + stepUp + [("nonce", transaction.nonce)]
    }

    public func completeLogin(callback: [String: String], transaction: LoginTransaction) async throws -> LoginResult {
        let metadata = try await discovery.current()
        // RFC 9207: the `oauth2` steps check `iss` against the discovered issuer and its advertised support.
        let oauth2 = oauth2(metadata)
        let (response, credential) = try await oauth2.redeem(code: try oauth2.authorizationCode(from: callback), transaction: transaction)
        guard let idToken = response["id_token"]?.stringValue else {
            throw ProviderError.rejected(code: "id_token_missing", description: "The token response has no id_token (is the openid scope allowed?).")
        }
        var claims = try await validator.validate(idToken, metadata: metadata, nonce: transaction.nonce, accessToken: credential.accessToken)
        // OIDC Core §3.1.2.1: asked with max_age, the ID token must say when the person authenticated.
        if transaction.maxAge != nil, claims["auth_time"] == nil {
            throw ProviderError.rejected(code: "auth_time_missing", description: "The ID token has no auth_time although max_age was asked.")
        }
        let authentication = claims
        if let endpoint = metadata.userinfoEndpoint {
            let userinfo = try await oauth2.userinfo(endpoint: endpoint, credential: credential)
            // OIDC Core §5.3.4: userinfo about someone else is a substitution attack.
            guard userinfo["sub"]?.stringValue == claims["sub"]?.stringValue else {
                throw ProviderError.rejected(code: "userinfo_subject_mismatch", description: "userinfo's sub differs from the ID token's.")
            }
            claims.merge(userinfo) { _, new in new }
        }
        if configuration.requireVerifiedEmail, claims["email"] != nil {
            let verified: Bool
            switch claims["email_verified"] {
            case .bool(let value)?: verified = value
            case .string(let value)?: verified = value == "true"
            default: verified = false
            }
            guard verified else {
                throw ProviderError.rejected(code: "email_not_verified", description: "The provider has not verified this email address.")
            }
        }
        var identity = try oauth2.mapIdentity(claims)
        Self.recordAuthentication(from: authentication, in: &identity, loginTime: context.clock.now())
        return LoginResult(identity: identity, credential: credential)
    }

    /// What the ID token says of the provider's session and of the authentication (never userinfo's word):
    /// `sid` (back-channel logout), `acr`, `amr` and `auth_time` (the login's time when absent).
    static func recordAuthentication(from idToken: [String: JSONValue], in identity: inout Identity, loginTime: Date) {
        if case .string(let sid)? = idToken["sid"], !sid.isEmpty { identity.providerSessionID = sid }
        if case .string(let acr)? = idToken["acr"] { identity.acr = acr }
        if case .array(let methods)? = idToken["amr"] {
            identity.amr = methods.compactMap { if case .string(let method) = $0 { method } else { nil } }
        }
        identity.authTime = NumericDate("auth_time", in: idToken).seconds.map(Date.init(timeIntervalSince1970:)) ?? loginTime
    }

    // MARK: Refresh and logout

    /// The refresh grant; a new ID token is validated again and must name the same `sub`.
    public func refresh(_ credential: Credential) async throws -> Credential {
        let metadata = try await discovery.current()
        let (response, renewed) = try await oauth2(metadata).renew(credential)
        if let idToken = response["id_token"]?.stringValue {
            let claims = try await validator.validate(idToken, metadata: metadata, nonce: nil, accessToken: renewed.accessToken)
            let previous = credential.extras["id_token"].flatMap(OAuth2Provider.unverifiedPayload(of:))?["sub"]?.stringValue
            guard let previous, claims["sub"]?.stringValue == previous else {
                throw ProviderError.identityVoid(code: "subject_changed", description: "The refreshed ID token names another user.")
            }
        }
        return renewed
    }

    /// RFC 7009 revocation, when the provider advertises (or the file sets) a revocation endpoint.
    public func revoke(_ credential: Credential) async throws {
        let metadata = try await discovery.current()
        guard metadata.revocationEndpoint != nil else { return }
        try await oauth2(metadata).revoke(credential)
    }

    /// RP-initiated logout: `end_session_endpoint` with `id_token_hint`, `post_logout_redirect_uri` and `state`,
    /// which the provider passes back on the redirect (RP-Initiated Logout 1.0 §2).
    public func browserLogoutURL(for credential: Credential, returnTo: String, state: String?) -> String? {
        guard let endpoint = discovery.cached?.endSessionEndpoint ?? configuration.endSessionEndpoint else { return nil }
        var parameters: [(String, String)] = []
        if let idToken = credential.extras["id_token"] { parameters.append(("id_token_hint", idToken)) }
        parameters += [("post_logout_redirect_uri", returnTo), ("client_id", configuration.clientID)]
        if let state { parameters.append(("state", state)) }
        return FormEncoding.appending(parameters, to: endpoint)
    }

    // MARK: Internals

    /// The `oauth2` adapter configured with the discovered endpoints.
    func oauth2(_ metadata: OIDCProviderMetadata, extraAuthorizationParameters: [(String, String)] = []) -> OAuth2Provider {
        OAuth2Provider(
            descriptor: descriptor,
            configuration: OAuth2Provider.Configuration(
                authorizationEndpoint: metadata.authorizationEndpoint, tokenEndpoint: metadata.tokenEndpoint,
                userinfoEndpoint: metadata.userinfoEndpoint, revocationEndpoint: metadata.revocationEndpoint, issuer: metadata.issuer,
                issParameterSupported: metadata.issParameterSupported, clientID: configuration.clientID,
                clientSecret: configuration.clientSecret, clientAuthentication: configuration.clientAuthentication,
                scopes: configuration.scopes, extraAuthorizationParameters: extraAuthorizationParameters),
            context: context, responseIssuer: responseIssuer)
    }

    static func reason(_ error: ProviderError) -> String {
        switch error {
        case .rejected(let code, let description), .identityVoid(let code, let description): "\(code): \(description)"
        case .unavailable(let reason), .invalidResponse(let reason), .invalidGrant(let reason): reason
        }
    }
}
