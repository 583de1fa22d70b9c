extension StandInSPiDServer {
    /// A SPiD account the login form accepts.
    public struct User: Sendable, Equatable {
        /// The password the login form checks.
        public var password: String
        /// SPiD's numeric user id, as a string (`user_id` in token responses, `userId` in `/api/2/me`).
        public var userID: String
        /// `name.givenName`; nil derives it from the e-mail address (`alice@…` → `Alice`).
        public var givenName: String?
        /// `name.familyName`.
        public var familyName: String

        /// - Parameters:
        ///   - password: the login password.
        ///   - userID: numeric user id, as a string.
        ///   - givenName: nil derives it from the e-mail address.
        ///   - familyName: the family name.
        public init(password: String, userID: String, givenName: String? = nil, familyName: String = "Example") {
            self.password = password
            self.userID = userID
            self.givenName = givenName
            self.familyName = familyName
        }
    }

    /// Settings of a stand-in SPiD server.
    public struct Configuration: Sendable {
        /// The one registered client.
        public var clientID: String
        /// The client's secret: SPiD clients are confidential and authenticate at `/oauth/token` with
        /// HTTP Basic or with `client_id` + `client_secret` in the form.
        public var clientSecret: String
        /// Redirect URIs registered for the client (exact match), besides any `http://127.0.0.1:{port}/…`
        /// or `http://[::1]:{port}/…` URI, which is always accepted. Used by `/flow/login` and `/logout`.
        public var redirectURIs: [String]
        /// Accounts for the login form: e-mail address → password and user id.
        public var users: [String: User]
        /// `expires_in` of access tokens, in seconds (SPiD: one week).
        public var accessTokenLifetime: Int
        /// Lifetime of authorization codes, in seconds.
        public var codeLifetime: Int
        /// true: every refresh returns a new refresh token and retires the old one;
        /// false: refresh responses repeat the refresh token that was presented, which stays valid.
        public var rotateRefreshTokens: Bool
        /// The stand-in's clock runs this many seconds ahead of the real one (negative: behind).
        /// It shows in `server_time` of token responses; token expiry itself follows the real clock.
        public var clockSkew: Int
        /// `scope` of token responses.
        public var scope: String
        /// The port to bind; 0 picks a free one.
        public var port: Int

        /// - Parameters:
        ///   - clientID: the registered client id.
        ///   - clientSecret: the client's secret.
        ///   - redirectURIs: registered redirect URIs besides loopback ones.
        ///   - users: e-mail address → account.
        ///   - accessTokenLifetime: seconds.
        ///   - codeLifetime: seconds.
        ///   - rotateRefreshTokens: issue a new refresh token on each refresh.
        ///   - clockSkew: seconds added to the real clock for `server_time`.
        ///   - scope: `scope` of token responses.
        ///   - port: 0 for an ephemeral port.
        public init(
            clientID: String = "spid-demo-client",
            clientSecret: String = "spid-demo-secret",
            redirectURIs: [String] = [],
            users: [String: User] = ["alice@example.test": User(password: "alice-password", userID: "938029")],
            accessTokenLifetime: Int = 604_800,
            codeLifetime: Int = 600,
            rotateRefreshTokens: Bool = false,
            clockSkew: Int = 0,
            scope: String = "profile email",
            port: Int = 0
        ) {
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.redirectURIs = redirectURIs
            self.users = users
            self.accessTokenLifetime = accessTokenLifetime
            self.codeLifetime = codeLifetime
            self.rotateRefreshTokens = rotateRefreshTokens
            self.clockSkew = clockSkew
            self.scope = scope
            self.port = port
        }
    }
}
