public import GatehouseCore

extension OAuth2Provider {
    /// How the client authenticates at the token endpoint.
    public enum ClientAuthentication: String, Sendable {
        /// HTTP Basic with the client id and secret (RFC 6749 §2.3.1), the default.
        case clientSecretBasic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form body.
        case clientSecretPost = "client_secret_post"
        /// A public client: only `client_id` in the body; PKCE protects the code.
        case none
    }

    /// The `oauth2` keys of a provider file.
    public struct Configuration: Sendable {
        public var authorizationEndpoint: String
        public var tokenEndpoint: String
        public var userinfoEndpoint: String?
        public var revocationEndpoint: String?
        /// The provider's issuer identifier: a callback's RFC 9207 `iss` must equal it, and a callback
        /// carrying `iss` is refused when it is not set (``AuthorizationResponseIssuer`` has the rules).
        public var issuer: String?
        /// The provider sends `iss` with every authorization response, so a callback without one is refused
        /// (`authorization_response_iss_parameter_supported`, the RFC 8414 metadata name; needs `issuer`).
        public var issParameterSupported: Bool
        public var clientID: String
        public var clientSecret: String?
        public var clientAuthentication: ClientAuthentication
        public var scopes: [String]
        /// Extra query parameters for the authorization request: `authorization_params` of the file
        /// (``AuthorizationRequestParameters``), and a kind's own (SPiD's `force=1`, OIDC's `nonce`).
        public var extraAuthorizationParameters: [(String, String)]
        /// Extra form fields for every token request (SPiD's `scope`); not a file key.
        public var extraTokenParameters: [(String, String)] = []
        /// `jwks_url`: the provider's key set, for JWT access tokens presented as bearer tokens (needs `issuer`).
        public var jwksURL: String?
        /// `bearer_tokens:` (``BearerTokenSettings``).
        public var bearerTokens: BearerTokenSettings = .disabled

        public init(
            authorizationEndpoint: String, tokenEndpoint: String, userinfoEndpoint: String? = nil, revocationEndpoint: String? = nil,
            issuer: String? = nil, issParameterSupported: Bool = false, clientID: String, clientSecret: String? = nil,
            clientAuthentication: ClientAuthentication? = nil,
            scopes: [String] = [], extraAuthorizationParameters: [(String, String)] = []
        ) {
            self.authorizationEndpoint = authorizationEndpoint
            self.tokenEndpoint = tokenEndpoint
            self.userinfoEndpoint = userinfoEndpoint
            self.revocationEndpoint = revocationEndpoint
            self.issuer = issuer
            self.issParameterSupported = issParameterSupported
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.clientAuthentication = clientAuthentication ?? (clientSecret == nil ? .none : .clientSecretBasic)
            self.scopes = scopes
            self.extraAuthorizationParameters = extraAuthorizationParameters
        }

        /// The provider-file key of ``issParameterSupported``.
        public static let issParameterSupportedKey = "authorization_response_iss_parameter_supported"

        /// Reads the `oauth2` keys; the caller calls `finish()`. A collecting map reads them all (see ``ConfigMap``).
        /// `claims` is the file's claim mapping (the defaults of `bearer_tokens.claims`).
        public init(_ map: ConfigMap, claims: ClaimMapping = ClaimMapping()) throws {
            let secret = try map.secret("client_secret")
            let method = try map.choice("token_endpoint_auth_method", ["client_secret_basic", "client_secret_post", "none"])
                .flatMap(ClientAuthentication.init(rawValue:))
            if let method, method != .none, secret == nil {
                try map.report(
                    "token_endpoint_auth_method", "'\(map.qualified("token_endpoint_auth_method"))' \(method.rawValue) needs 'client_secret'",
                    after: ["client_secret"])
            }
            let issuer = try map.string("issuer")
            let issParameterSupported = try map.bool(Self.issParameterSupportedKey) ?? false
            if issParameterSupported, issuer == nil {
                try map.report(
                    Self.issParameterSupportedKey,
                    "'\(map.qualified(Self.issParameterSupportedKey))' needs 'issuer': the iss the provider sends is compared with it (RFC 9207)",
                    after: ["issuer"])
            }
            self.init(
                authorizationEndpoint: try map.requiredURL("authorization_endpoint"),
                tokenEndpoint: try map.requiredURL("token_endpoint"),
                userinfoEndpoint: try map.url("userinfo_endpoint"),
                revocationEndpoint: try map.url("revocation_endpoint"),
                issuer: issuer,
                issParameterSupported: issParameterSupported,
                clientID: try map.requiredString("client_id"),
                clientSecret: secret,
                clientAuthentication: method,
                scopes: try map.strings("scopes") ?? [],
                extraAuthorizationParameters: try AuthorizationRequestParameters.read(map)
            )
            jwksURL = try map.url("jwks_url")
            if jwksURL != nil, issuer == nil {
                try map.report("jwks_url", "'\(map.qualified("jwks_url"))' needs 'issuer': a JWT's iss is compared with it", after: ["issuer"])
            }
            bearerTokens = try BearerTokenSettings(map, claims: claims)
            if bearerTokens.accept, jwksURL == nil, bearerTokens.introspectionEndpoint == nil {
                try map.report(
                    BearerTokenSettings.key,
                    "'\(map.qualified(BearerTokenSettings.key)).accept' needs 'jwks_url' (JWT access tokens) or "
                        + "'\(map.qualified(BearerTokenSettings.introspectionEndpointKey))' (opaque tokens)",
                    after: ["jwks_url", BearerTokenSettings.key])
            }
        }
    }
}
