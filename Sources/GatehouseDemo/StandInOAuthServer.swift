import Hummingbird
public import Logging

/// A real OAuth 2.0 authorization server and resource server on loopback, for `gatehouse demo` and the
/// end-to-end tests: the authorization-code flow with PKCE (S256 required), refresh with rotation,
/// RFC 7009 revocation, RFC 9207 `iss` on redirects, a userinfo endpoint and a SURFnet-style grades API.
///
/// ```swift
/// let server = StandInOAuthServer(configuration: .init(clientSecret: "s3cret"))
/// let port = try await server.start()
/// defer { Task { await server.stop() } }
/// await server.setUnavailable(true)   // /token and the APIs now answer 503
/// ```
///
/// Endpoints: `GET`/`POST /authorize`, `POST /token`, `POST /revoke`, `GET /userinfo`,
/// `GET /api/grades/@me`, any method on `/api/echo/**`, and
/// `GET /.well-known/oauth-authorization-server` (RFC 8414 metadata).
/// Test controls are methods on this type, not HTTP endpoints.
public final class StandInOAuthServer: Sendable {
    /// The settings this server was created with.
    public let configuration: Configuration
    let state: StandInOAuthState
    let logger: Logger
    private let listener = LoopbackListener()

    /// Creates a stopped server.
    /// - Parameters:
    ///   - configuration: client, users, token lifetimes and rotation.
    ///   - logger: where Hummingbird logs; defaults to warnings only, to keep test output quiet.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.configuration = configuration
        self.state = StandInOAuthState(configuration: configuration)
        self.logger = logger ?? Self.quietLogger(label: "gatehouse.demo.oauth")
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

    /// `http://127.0.0.1:<port>`, also the issuer sent as RFC 9207 `iss`.
    /// Before `start()` the port reads as the configured one.
    public var baseURL: String { "http://\(listener.host):\(port ?? configuration.port)" }

    /// `baseURL` + `/authorize`.
    public var authorizationEndpoint: String { baseURL + "/authorize" }
    /// `baseURL` + `/token`.
    public var tokenEndpoint: String { baseURL + "/token" }
    /// `baseURL` + `/revoke`.
    public var revocationEndpoint: String { baseURL + "/revoke" }
    /// `baseURL` + `/userinfo`.
    public var userinfoEndpoint: String { baseURL + "/userinfo" }
    /// `baseURL` + `/api`: the resource server (`/grades/@me`, `/echo/**`).
    public var apiBaseURL: String { baseURL + "/api" }

    // MARK: Test controls

    /// Counters and token totals so far.
    public var stats: Stats {
        get async { await state.stats() }
    }

    /// While on, `/token`, `/revoke`, `/userinfo` and the APIs answer 503 with `Retry-After: 1`.
    public func setUnavailable(_ unavailable: Bool) async {
        await state.setUnavailable(unavailable)
    }

    /// Makes `/token` wait this long before answering, so that concurrent refreshes overlap.
    public func setTokenDelay(_ delay: Duration) async {
        await state.setTokenDelay(delay)
    }

    /// Forgets every refresh token: the next refresh gets `invalid_grant`.
    public func revokeAllRefreshTokens() async {
        await state.revokeAllRefreshTokens()
    }

    /// Expires every access token issued so far: the APIs answer 401 `invalid_token` for them.
    public func expireAllAccessTokens() async {
        await state.expireAllAccessTokens()
    }

    static func quietLogger(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }
}
