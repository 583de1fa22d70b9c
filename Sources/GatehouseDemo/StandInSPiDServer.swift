import Hummingbird
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
/// Test controls are methods on this type, not HTTP endpoints.
public final class StandInSPiDServer: Sendable {
    /// The settings this server was created with.
    public let configuration: Configuration
    let state: StandInSPiDState
    let logger: Logger
    private let listener = LoopbackListener()

    /// Creates a stopped server.
    /// - Parameters:
    ///   - configuration: client, users, token lifetime, rotation and clock skew.
    ///   - logger: where Hummingbird logs; defaults to warnings only, to keep test output quiet.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.configuration = configuration
        self.state = StandInSPiDState(configuration: configuration)
        self.logger = logger ?? StandInOAuthServer.quietLogger(label: "gatehouse.demo.spid")
    }

    /// Starts listening on 127.0.0.1 and returns the bound port (ephemeral unless `configuration.port` is set).
    @discardableResult
    public func start() async throws -> Int {
        try await listener.start(port: configuration.port, responder: makeRouter().buildResponder(), logger: logger)
    }

    /// Stops listening; tokens and counters are kept, so a restarted server still knows them.
    public func stop() async {
        await listener.stop()
    }

    /// The bound port, or nil before `start()`.
    public var port: Int? { listener.port }

    /// `http://127.0.0.1:<port>`: SPiD's `<base>`. Before `start()` the port reads as the configured one.
    public var baseURL: String { "http://\(listener.host):\(port ?? configuration.port)" }

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

    // MARK: Test controls

    /// Counters and token totals so far.
    public var stats: Stats {
        get async { await state.stats() }
    }

    /// While on, `/oauth/token` and `/api/2/**` answer 503 with `Retry-After: 1`.
    public func setUnavailable(_ unavailable: Bool) async {
        await state.setUnavailable(unavailable)
    }

    /// Makes `/oauth/token` wait this long before answering, so that concurrent refreshes overlap.
    public func setTokenDelay(_ delay: Duration) async {
        await state.setTokenDelay(delay)
    }

    /// Forgets every refresh token: the next refresh gets `invalid_grant`.
    public func revokeAllRefreshTokens() async {
        await state.revokeAllRefreshTokens()
    }

    /// Expires every access token issued so far: the API answers 401 `invalid_token` for them.
    public func expireAllAccessTokens() async {
        await state.expireAllAccessTokens()
    }
}
