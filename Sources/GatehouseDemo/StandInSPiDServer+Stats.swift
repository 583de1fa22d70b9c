extension StandInSPiDServer {
    /// How a client authenticated at `/oauth/token`.
    public enum ClientAuthentication: String, Sendable, Equatable {
        /// `Authorization: Basic base64(client_id:client_secret)` (SPiD's recommendation).
        case basic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form.
        case post = "client_secret_post"
    }

    /// What the server has seen and holds; read with `await server.stats`.
    public struct Stats: Sendable, Equatable {
        /// Successful sign-ins through the login form.
        public var logins: Int
        /// `/oauth/token` requests by `grant_type` as sent (`authorization_code`, `refresh_token`, …;
        /// missing → `""`), counted on arrival, including those that fail or get 503.
        public var tokenRequests: [String: Int]
        /// `/oauth/token` requests answered with an OAuth error (not counting 503s).
        public var failedTokenRequests: Int
        /// `/api/2/**` requests that presented a valid access token (`/api/2/logout` included).
        public var apiRequests: Int
        /// Successful `GET /api/2/logout` calls.
        public var apiLogouts: Int
        /// Accepted browser logouts (`GET /logout`).
        public var browserLogouts: Int
        /// Access tokens that are neither logged out nor expired.
        public var validAccessTokens: Int
        /// Refresh tokens that would be accepted now.
        public var validRefreshTokens: Int
        /// How the last authenticated `/oauth/token` request identified its client.
        public var lastClientAuthentication: ClientAuthentication?

        /// `/oauth/token` requests with `grant_type=authorization_code`.
        public var authorizationCodeRequests: Int { tokenRequests["authorization_code"] ?? 0 }
        /// `/oauth/token` requests with `grant_type=refresh_token`.
        public var refreshTokenRequests: Int { tokenRequests["refresh_token"] ?? 0 }
    }
}
