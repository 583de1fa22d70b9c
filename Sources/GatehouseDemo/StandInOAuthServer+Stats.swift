extension StandInOAuthServer {
    /// How a client authenticated at `/token` or `/revoke`.
    public enum ClientAuthentication: String, Sendable, Equatable {
        /// `Authorization: Basic` (`client_secret_basic`).
        case basic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form (`client_secret_post`).
        case post = "client_secret_post"
        /// A public client: `client_id` only.
        case none
    }

    /// What the server has seen and holds; read with `await server.stats`.
    public struct Stats: Sendable, Equatable {
        /// `/token` requests by `grant_type` as sent (`authorization_code`, `refresh_token`, …; missing → `""`),
        /// counted on arrival, including those that fail or get 503.
        public var tokenRequests: [String: Int]
        /// `/token` requests answered with an OAuth error (not counting 503s).
        public var failedTokenRequests: Int
        /// `/revoke` requests that were accepted (known or unknown token).
        public var revocationRequests: Int
        /// `/userinfo` requests with a valid token.
        public var userinfoRequests: Int
        /// `/api/**` requests with a valid token.
        public var apiRequests: Int
        /// Access tokens that are neither revoked nor expired.
        public var validAccessTokens: Int
        /// Refresh tokens that would be accepted now.
        public var validRefreshTokens: Int
        /// How the last authenticated `/token` or `/revoke` request identified its client.
        public var lastClientAuthentication: ClientAuthentication?

        /// `/token` requests with `grant_type=authorization_code`.
        public var authorizationCodeRequests: Int { tokenRequests["authorization_code"] ?? 0 }
        /// `/token` requests with `grant_type=refresh_token`.
        public var refreshTokenRequests: Int { tokenRequests["refresh_token"] ?? 0 }
    }
}
