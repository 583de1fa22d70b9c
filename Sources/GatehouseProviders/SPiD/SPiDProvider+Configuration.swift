public import GatehouseCore

extension SPiDProvider {
    /// The `spid` keys of a provider file: those of `oauth2`, plus `base_url`, `logout_endpoint` and
    /// `browser_logout_endpoint`. With `base_url`, every endpoint has SPiD's default path.
    public struct Configuration: Sendable {
        /// The OAuth 2.0 part (endpoints, client, scopes).
        public var oauth2: OAuth2Provider.Configuration
        public var baseURL: String?
        /// API logout: invalidates the token and the refresh token tied to it (`/api/2/logout`).
        public var logoutEndpoint: String?
        /// Browser logout: ends SPiD's own browser session (`/logout`).
        public var browserLogoutEndpoint: String?

        public init(oauth2: OAuth2Provider.Configuration, baseURL: String? = nil, logoutEndpoint: String? = nil, browserLogoutEndpoint: String? = nil)
        {
            self.oauth2 = oauth2
            self.baseURL = baseURL
            self.logoutEndpoint = logoutEndpoint
            self.browserLogoutEndpoint = browserLogoutEndpoint
        }

        /// Reads the keys; the caller calls `finish()`. A collecting map reads them all (see ``ConfigMap``).
        public init(_ map: ConfigMap) throws {
            let base = try map.url("base_url").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            func endpoint(_ key: String, _ path: String) throws -> String? {
                try map.url(key) ?? base.map { $0 + path }
            }
            func required(_ key: String, _ path: String) throws -> String {
                guard let value = try endpoint(key, path) else {
                    try map.report(key, "'\(map.qualified(key))' is required unless 'base_url' is given", after: ["base_url"])
                    return ConfigMap.placeholderURL
                }
                return value
            }
            let secret = try map.secret("client_secret")
            // SPiD's documented exchange sends client_id and client_secret in the form body.
            let method =
                try map.choice("token_endpoint_auth_method", ["client_secret_basic", "client_secret_post", "none"])
                .flatMap(OAuth2Provider.ClientAuthentication.init(rawValue:))
                ?? (secret == nil ? OAuth2Provider.ClientAuthentication.none : .clientSecretPost)
            if method != .none, secret == nil {
                try map.report(
                    "token_endpoint_auth_method", "'\(map.qualified("token_endpoint_auth_method"))' \(method.rawValue) needs 'client_secret'",
                    after: ["client_secret"])
            }
            let scopes = try map.strings("scopes") ?? []
            var oauth2 = OAuth2Provider.Configuration(
                authorizationEndpoint: try required("authorization_endpoint", "/flow/login"),
                tokenEndpoint: try required("token_endpoint", "/oauth/token"),
                userinfoEndpoint: try endpoint("userinfo_endpoint", "/api/2/me"),
                revocationEndpoint: try map.url("revocation_endpoint"),
                issuer: try map.string("issuer"),
                clientID: try map.requiredString("client_id"),
                clientSecret: secret,
                clientAuthentication: method,
                scopes: scopes)
            // SPiD expects the scope on the token request too.
            if !scopes.isEmpty { oauth2.extraTokenParameters = [("scope", scopes.joined(separator: " "))] }
            self.init(
                oauth2: oauth2, baseURL: base,
                logoutEndpoint: try endpoint("logout_endpoint", "/api/2/logout"),
                browserLogoutEndpoint: try endpoint("browser_logout_endpoint", "/logout"))
        }
    }
}
