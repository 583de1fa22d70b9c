import Foundation
public import GatehouseCore

/// The `oauth2` adapter: authorization code with PKCE S256, refresh, RFC 7009 revocation.
///
/// Identity comes from the userinfo endpoint when configured, else from an `id_token` in the token
/// response (its payload is read as-is: it came straight from the token endpoint over the provider's
/// connection, OIDC Core §3.1.3.7; the `oidc` kind verifies signatures), else from the token response's
/// own fields. Other kinds built on OAuth 2.0 (`spid`, `oidc`) reuse its pieces.
public struct OAuth2Provider: RedirectLoginProvider, RefreshingProvider, RevokingProvider {
    public let descriptor: ProviderDescriptor
    public let configuration: Configuration
    let context: ProviderContext
    let tokenEndpoint: OAuth2TokenEndpoint
    /// The RFC 9207 `iss` check and what it remembers (whether this provider was seen sending `iss`).
    let responseIssuer: AuthorizationResponseIssuer
    /// `bearer_tokens:` when accepted (``BearerTokenProvider``); `nil` otherwise.
    let bearerTokens: ProviderBearerTokens?

    public init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext) {
        self.init(descriptor: descriptor, configuration: configuration, context: context, responseIssuer: AuthorizationResponseIssuer())
    }

    /// For kinds that build an `oauth2` adapter per call (`oidc`): `responseIssuer` outlives the adapter.
    init(descriptor: ProviderDescriptor, configuration: Configuration, context: ProviderContext, responseIssuer: AuthorizationResponseIssuer) {
        self.descriptor = descriptor
        self.configuration = configuration
        self.context = context
        self.tokenEndpoint = OAuth2TokenEndpoint(configuration: configuration, context: context)
        self.responseIssuer = responseIssuer
        self.bearerTokens =
            configuration.bearerTokens.accept
            ? ProviderBearerTokens(
                settings: configuration.bearerTokens, fileClaims: descriptor.claims, keys: JWKSCache(context: context), context: context,
                clockSkew: ProviderBearerTokens.defaultClockSkew)
            : nil
    }

    public var features: ProviderFeatures {
        ProviderFeatures(revocation: configuration.revocationEndpoint != nil, expiryKnown: true, userinfo: configuration.userinfoEndpoint != nil)
    }

    // MARK: RedirectLoginProvider

    public func authorizationURL(for transaction: LoginTransaction) throws -> String {
        var parameters: [(String, String)] = [
            ("response_type", "code"),
            ("client_id", configuration.clientID),
            ("redirect_uri", transaction.callbackURL),
            ("state", transaction.state),
            ("code_challenge", transaction.codeChallenge),
            ("code_challenge_method", "S256"),
        ]
        if !configuration.scopes.isEmpty {
            parameters.append(("scope", configuration.scopes.joined(separator: " ")))
        }
        parameters += configuration.extraAuthorizationParameters
        return FormEncoding.appending(parameters, to: configuration.authorizationEndpoint)
    }

    public func completeLogin(callback: [String: String], transaction: LoginTransaction) async throws -> LoginResult {
        let (response, credential) = try await redeem(code: try authorizationCode(from: callback), transaction: transaction)
        let identity = try await identity(tokenResponse: response, credential: credential)
        return LoginResult(identity: identity, credential: credential)
    }

    // MARK: Steps, shared with the kinds built on OAuth 2.0

    /// The authorization code of a callback, after its `error` and RFC 9207 `iss` are checked
    /// (``AuthorizationResponseIssuer`` has the rules).
    func authorizationCode(from callback: [String: String]) throws -> String {
        if let error = callback["error"] {
            throw ProviderError.rejected(code: error, description: callback["error_description"] ?? "The provider refused the sign-in.")
        }
        try responseIssuer.check(callback, issuer: configuration.issuer, advertised: configuration.issParameterSupported)
        guard let code = callback["code"], !code.isEmpty else {
            throw ProviderError.invalidResponse("The callback carries neither code nor error.")
        }
        return code
    }

    /// Exchanges an authorization code (with the gateway's PKCE verifier) for a token response.
    func redeem(code: String, transaction: LoginTransaction) async throws -> (response: JSONValue, credential: Credential) {
        let response = try await tokenEndpoint.request(
            [
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", transaction.callbackURL),
                ("code_verifier", transaction.codeVerifier),
            ] + configuration.extraTokenParameters)
        let credential = try OAuth2TokenResponse.credential(
            from: response, previous: nil, requestedScopes: configuration.scopes, now: context.clock.now())
        return (response, credential)
    }

    /// The refresh grant: the token response and the renewed credential.
    func renew(_ credential: Credential) async throws -> (response: JSONValue, credential: Credential) {
        guard let refreshToken = credential.refreshToken else {
            throw ProviderError.invalidGrant("The credential has no refresh token.")
        }
        let response = try await tokenEndpoint.request(
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken)] + configuration.extraTokenParameters)
        let renewed = try OAuth2TokenResponse.credential(
            from: response, previous: credential, requestedScopes: configuration.scopes, now: context.clock.now())
        return (response, renewed)
    }

    // MARK: RefreshingProvider

    public func refresh(_ credential: Credential) async throws -> Credential {
        try await renew(credential).credential
    }

    // MARK: RevokingProvider

    public func revoke(_ credential: Credential) async throws {
        guard let endpoint = configuration.revocationEndpoint else { return }
        // Revoking the refresh token ends the grant (RFC 7009 §2.1); the access token too, for servers that don't.
        var tokens: [(String, String)] = []
        if let refreshToken = credential.refreshToken { tokens.append((refreshToken, "refresh_token")) }
        tokens.append((credential.accessToken, "access_token"))
        var firstError: (any Error)?
        for (token, hint) in tokens {
            do {
                try await tokenEndpoint.revoke(token: token, hint: hint, endpoint: endpoint)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    // MARK: Identity

    /// Merges token-response fields, `id_token` claims and userinfo (later wins), then maps the claims.
    func identity(tokenResponse: JSONValue, credential: Credential) async throws -> Identity {
        var claims = Self.tokenClaims(of: tokenResponse)
        if let endpoint = configuration.userinfoEndpoint {
            claims.merge(try await userinfo(endpoint: endpoint, credential: credential)) { _, new in new }
        }
        return try mapIdentity(claims)
    }

    /// The token response's non-token members, plus the claims of an `id_token` in it.
    static func tokenClaims(of tokenResponse: JSONValue) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        for (key, value) in tokenResponse.objectValue ?? [:] where !OAuth2TokenResponse.tokenFields.contains(key) {
            claims[key] = value
        }
        if let idToken = tokenResponse["id_token"]?.stringValue, let payload = unverifiedPayload(of: idToken) {
            claims.merge(payload) { _, new in new }
        }
        return claims
    }

    /// The normalized identity of a claim set, by the provider's claim mapping.
    func mapIdentity(_ claims: [String: JSONValue]) throws -> Identity {
        guard let identity = descriptor.claims.identity(from: .object(claims)) else {
            throw ProviderError.invalidResponse("The provider's answer has no '\(descriptor.claims.subject)' claim for the subject.")
        }
        return identity
    }

    /// The userinfo document, fetched with the new access token.
    func userinfo(endpoint: String, credential: Credential) async throws -> [String: JSONValue] {
        var outgoing = OutgoingRequest(url: endpoint, headers: [("Accept", "application/json")])
        APIAuthentication.bearer.attach(credential, to: &outgoing)
        let response = try await context.http.send(
            outgoing, unreachable: "userinfo endpoint unreachable", serverError: { "userinfo endpoint answered \($0)" })
        guard response.status == 200 else {
            throw ProviderError.invalidResponse("userinfo endpoint answered \(response.status)")
        }
        return try ProviderHTTP.jsonObject(of: response, otherwise: "userinfo is not a JSON object")
    }

    /// The payload of a compact JWS, not verified.
    static func unverifiedPayload(of jwt: String) -> [String: JSONValue]? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Base64URL.decode(String(parts[1])) else { return nil }
        return JSONValue.parse(data)?.objectValue
    }
}
