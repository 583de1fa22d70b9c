public import Logging

/// A real OAuth 2.0 authorization server and resource server on loopback, for `gatehouse demo` and the
/// end-to-end tests: the authorization-code flow with PKCE (S256 required), refresh with rotation,
/// RFC 7009 revocation, RFC 9207 `iss` on redirects, a userinfo endpoint and a SURFnet-style grades API.
///
/// ```swift
/// let server = StandInOAuthServer(configuration: .init(clientSecret: "s3cret"))
/// let port = try await server.start()
/// defer { Task { await server.stop() } }
/// await server.setUnavailable(true)   // /token, /revoke, /userinfo and the APIs now answer 503
/// ```
///
/// ``baseURL`` is also the issuer sent as RFC 9207 `iss`.
/// Endpoints: `GET`/`POST /authorize`, `POST /token`, `POST /revoke`, `GET /userinfo`,
/// `GET /api/grades/@me`, any method on `/api/echo/**`, and
/// `GET /.well-known/oauth-authorization-server` (RFC 8414 metadata).
/// Test controls are methods on this type, not HTTP endpoints.
public final class StandInOAuthServer: StandInTokenServer {
    /// The settings this server was created with.
    public let configuration: Configuration
    /// The listener the server runs on.
    public let loopback: StandInLoopback<StandInOAuthServer>
    /// The state the test controls act on.
    public let tokenControls: StandInTokenControls<Stats>
    let state: StandInOAuthState

    /// Creates a stopped server.
    /// - Parameters:
    ///   - configuration: client, users, token lifetimes and rotation.
    ///   - logger: where Hummingbird logs; defaults to warnings only, to keep test output quiet.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) {
        self.configuration = configuration
        self.state = StandInOAuthState(configuration: configuration)
        self.tokenControls = StandInTokenControls(state: state)
        self.loopback = StandInLoopback(port: configuration.port, logger: logger, label: "gatehouse.demo.oauth") { $0.makeRouter() }
    }

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
}
