extension StandInOAuthServer {
    /// Settings of a stand-in authorization server.
    public struct Configuration: Sendable {
        /// The one registered client.
        public var clientID: String
        /// nil: a public client that sends `client_id` in the form; set: a confidential client that must
        /// authenticate with `client_secret_basic` or `client_secret_post`.
        public var clientSecret: String?
        /// Redirect URIs registered for the client (exact match), besides loopback ones.
        public var redirectURIs: [String]
        /// Whether any `http://127.0.0.1:{port}/…` or `http://[::1]:{port}/…` redirect URI is accepted (RFC 8252 §7.3).
        public var allowLoopbackRedirectURIs: Bool
        /// `expires_in` of access tokens, in seconds.
        public var accessTokenLifetime: Int
        /// Lifetime of authorization codes, in seconds.
        public var codeLifetime: Int
        /// true: every refresh returns a new refresh token and retires the old one;
        /// false: the refresh token is reused and refresh responses omit `refresh_token` (php-oauth style).
        public var rotateRefreshTokens: Bool
        /// Accounts for the login form: username → password.
        public var users: [String: String]
        /// The scopes the client may ask for, space separated; also what an authorization without `scope` gets.
        public var scope: String
        /// The port to bind; 0 picks a free one.
        public var port: Int

        /// - Parameters:
        ///   - clientID: the registered client id.
        ///   - clientSecret: nil for a public client.
        ///   - redirectURIs: registered redirect URIs besides loopback ones.
        ///   - allowLoopbackRedirectURIs: accept any loopback `http` redirect URI.
        ///   - accessTokenLifetime: seconds.
        ///   - codeLifetime: seconds.
        ///   - rotateRefreshTokens: issue a new refresh token on each refresh.
        ///   - users: username → password.
        ///   - scope: space-separated scopes the client may request.
        ///   - port: 0 for an ephemeral port.
        public init(
            clientID: String = "demo-client",
            clientSecret: String? = nil,
            redirectURIs: [String] = [],
            allowLoopbackRedirectURIs: Bool = true,
            accessTokenLifetime: Int = 60,
            codeLifetime: Int = 600,
            rotateRefreshTokens: Bool = true,
            users: [String: String] = ["alice": "alice-password", "bob": "bob-password"],
            scope: String = "grades",
            port: Int = 0
        ) {
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.redirectURIs = redirectURIs
            self.allowLoopbackRedirectURIs = allowLoopbackRedirectURIs
            self.accessTokenLifetime = accessTokenLifetime
            self.codeLifetime = codeLifetime
            self.rotateRefreshTokens = rotateRefreshTokens
            self.users = users
            self.scope = scope
            self.port = port
        }

        /// The scopes the client may request.
        var allowedScopes: [String] { scope.split(separator: " ").map(String.init) }
    }
}
