public import Foundation
public import GatehouseCore

extension OIDCProvider {
    /// The `oidc` keys of a provider file: the issuer and the client; endpoints come from discovery
    /// unless the file overrides them.
    public struct Configuration: Sendable {
        /// Compared exactly with the discovery document's and the ID token's `iss`.
        public var issuer: String
        public var clientID: String
        public var clientSecret: String?
        public var clientAuthentication: OAuth2Provider.ClientAuthentication
        /// Default `openid profile email`; `openid` is always sent.
        public var scopes: [String]
        /// Refuse logins whose `email` is not `email_verified`.
        public var requireVerifiedEmail: Bool
        /// Accept HS256/384/512 ID tokens signed with the client secret (off by default).
        public var allowHMACIDTokens: Bool
        /// Overrides of discovered endpoints.
        public var authorizationEndpoint: String?
        public var tokenEndpoint: String?
        public var userinfoEndpoint: String?
        public var revocationEndpoint: String?
        public var jwksURI: String?
        public var endSessionEndpoint: String?
        /// How long a discovery document is used before it is fetched again.
        public var discoveryTTL: TimeInterval
        /// The shortest interval between two JWKS fetches caused by unknown `kid`s (``JWKSCache``'s rules).
        public var jwksRefetchInterval: TimeInterval
        /// Leeway on `exp`, `iat` and `nbf`.
        public var clockSkew: TimeInterval
        /// Accept `http` endpoints on non-loopback hosts, in the file and in discovery (`allow_insecure_http`, off by default).
        public var allowInsecureHTTP: Bool
        /// `authorization_params`: extra query parameters for the authorization request (``AuthorizationRequestParameters``).
        public var authorizationParameters: [(String, String)] = []
        /// `bearer_tokens:` (``BearerTokenSettings``); the introspection endpoint defaults to the discovered one.
        public var bearerTokens: BearerTokenSettings = .disabled
        /// `backchannel_logout`: accept logout tokens at `/v1/auth/{id}/backchannel-logout` (off by default).
        public var backchannelLogout = false

        public init(
            issuer: String, clientID: String, clientSecret: String? = nil, clientAuthentication: OAuth2Provider.ClientAuthentication? = nil,
            scopes: [String] = ["openid", "profile", "email"], requireVerifiedEmail: Bool = false, allowHMACIDTokens: Bool = false,
            authorizationEndpoint: String? = nil, tokenEndpoint: String? = nil, userinfoEndpoint: String? = nil,
            revocationEndpoint: String? = nil, jwksURI: String? = nil, endSessionEndpoint: String? = nil,
            discoveryTTL: TimeInterval = 3600, jwksRefetchInterval: TimeInterval = 10, clockSkew: TimeInterval = 60,
            allowInsecureHTTP: Bool = false
        ) {
            self.issuer = issuer
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.clientAuthentication = clientAuthentication ?? (clientSecret == nil ? .none : .clientSecretBasic)
            self.scopes = scopes.contains("openid") ? scopes : ["openid"] + scopes
            self.requireVerifiedEmail = requireVerifiedEmail
            self.allowHMACIDTokens = allowHMACIDTokens
            self.authorizationEndpoint = authorizationEndpoint
            self.tokenEndpoint = tokenEndpoint
            self.userinfoEndpoint = userinfoEndpoint
            self.revocationEndpoint = revocationEndpoint
            self.jwksURI = jwksURI
            self.endSessionEndpoint = endSessionEndpoint
            self.discoveryTTL = discoveryTTL
            self.jwksRefetchInterval = jwksRefetchInterval
            self.clockSkew = clockSkew
            self.allowInsecureHTTP = allowInsecureHTTP
        }

        /// Reads the `oidc` keys; the caller calls `finish()`. A collecting map reads them all (see ``ConfigMap``).
        /// `claims` is the file's claim mapping (the defaults of `bearer_tokens.claims`).
        public init(_ map: ConfigMap, claims: ClaimMapping = ClaimMapping()) throws {
            let secret = try map.secret("client_secret")
            let method = try map.choice("token_endpoint_auth_method", ["client_secret_basic", "client_secret_post", "none"])
                .flatMap(OAuth2Provider.ClientAuthentication.init(rawValue:))
            if let method, method != .none, secret == nil {
                try map.report(
                    "token_endpoint_auth_method", "'\(map.qualified("token_endpoint_auth_method"))' \(method.rawValue) needs 'client_secret'",
                    after: ["client_secret"])
            }
            let allowHMAC = try map.bool("allow_hmac_id_tokens") ?? false
            if allowHMAC, secret == nil {
                try map.report("allow_hmac_id_tokens", "'\(map.qualified("allow_hmac_id_tokens"))' needs 'client_secret'", after: ["client_secret"])
            }
            self.init(
                issuer: try map.requiredURL("issuer"),
                clientID: try map.requiredString("client_id"),
                clientSecret: secret,
                clientAuthentication: method,
                scopes: try map.strings("scopes") ?? ["openid", "profile", "email"],
                requireVerifiedEmail: try map.bool("require_verified_email") ?? false,
                allowHMACIDTokens: allowHMAC,
                authorizationEndpoint: try map.url("authorization_endpoint"),
                tokenEndpoint: try map.url("token_endpoint"),
                userinfoEndpoint: try map.url("userinfo_endpoint"),
                revocationEndpoint: try map.url("revocation_endpoint"),
                jwksURI: try map.url("jwks_uri"),
                endSessionEndpoint: try map.url("end_session_endpoint"),
                discoveryTTL: TimeInterval(try map.int("discovery_ttl_seconds", range: 1...86_400) ?? 3600),
                clockSkew: TimeInterval(try map.int("clock_skew_seconds", range: 0...600) ?? 60),
                allowInsecureHTTP: try InsecureHTTPPolicy(map).allowsInsecureHTTP
            )
            authorizationParameters = try AuthorizationRequestParameters.read(map)
            bearerTokens = try BearerTokenSettings(map, claims: claims)
            backchannelLogout = try map.bool("backchannel_logout") ?? false
        }
    }
}
