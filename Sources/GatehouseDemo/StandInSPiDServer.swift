public import Logging

/// A loopback stand-in for Schibsted SPiD ("Schibsted account"), for `gatehouse demo` and the end-to-end
/// tests: the browser login flow (`/flow/login`, PKCE accepted), `/oauth/token` with SPiD-shaped responses
/// (string `user_id`, `server_time` from a deliberately skewable clock, no `token_type`), the `/api/2`
/// API in the "SPP Container" envelope, API logout and browser logout.
///
/// ```swift
/// let server = StandInSPiDServer(configuration: .init(clockSkew: 300))
/// let port = try await server.start()
/// defer { Task { await server.stop() } }
/// await server.setUnavailable(true)   // /oauth/token and /api/2 now answer 503
/// ```
///
/// Endpoints: `GET`/`POST /flow/login` and `/flow/auth`, `POST /oauth/token`, `GET /api/2/me` (also
/// `/api/2/me.json`), `GET /api/2/logout`, any method on `/api/2/echo/**`, and `GET /logout` (browser).
/// API calls take the access token from the `oauth_token` query parameter or `Authorization: Bearer`;
/// both at once with different values are refused with 400 `invalid_request`.
/// ``baseURL`` is SPiD's `<base>`. Test controls are methods on this type, not HTTP endpoints.
public final class StandInSPiDServer: StandInTokenServer {
    /// The settings this server was created with.
    public let configuration: Configuration
    /// The listener the server runs on.
    public let loopback: StandInLoopback<StandInSPiDServer>
    /// The state the test controls act on.
    public let tokenControls: StandInTokenControls<Stats>
    let state: StandInSPiDState

    /// Creates a stopped server.
    /// - Parameters:
    ///   - configuration: client, users, token lifetime, rotation and clock skew.
    ///   - logger: where Hummingbird logs; defaults to warnings only, to keep test output quiet.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.configuration = configuration
        self.state = StandInSPiDState(configuration: configuration)
        self.tokenControls = StandInTokenControls(state: state)
        self.loopback = StandInLoopback(port: configuration.port, logger: logger, label: "gatehouse.demo.spid") { $0.makeRouter() }
    }

    /// `baseURL` + `/flow/login`: where the browser signs in.
    public var loginEndpoint: String { baseURL + "/flow/login" }
    /// `baseURL` + `/oauth/token`.
    public var tokenEndpoint: String { baseURL + "/oauth/token" }
    /// `baseURL` + `/api/2`: the API (`/me`, `/logout`, `/echo/**`).
    public var apiBaseURL: String { baseURL + "/api/2" }
    /// `baseURL` + `/api/2/me`.
    public var meEndpoint: String { apiBaseURL + "/me" }
    /// `baseURL` + `/api/2/logout`: invalidates the presented access token and its refresh token.
    public var logoutEndpoint: String { apiBaseURL + "/logout" }
    /// `baseURL` + `/logout`: the browser logout (`client_id`, `redirect_uri`).
    public var browserLogoutEndpoint: String { baseURL + "/logout" }
}
