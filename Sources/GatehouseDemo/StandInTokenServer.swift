/// A stand-in authorization server: besides listening on loopback it issues tokens, and tests can read its
/// counters and flip its switches through the methods here. Test controls are methods, not HTTP endpoints.
public protocol StandInTokenServer: StandInLoopbackServer {
    /// What ``stats`` reports.
    associatedtype Stats: Sendable

    /// The state the test controls act on.
    var tokenControls: StandInTokenControls<Stats> { get }
}

extension StandInTokenServer {
    /// Counters and token totals so far.
    public var stats: Stats {
        get async { await tokenControls.state.stats() }
    }

    /// While on, the token endpoint and the APIs answer 503 with `Retry-After: 1`.
    public func setUnavailable(_ unavailable: Bool) async {
        await tokenControls.state.setUnavailable(unavailable)
    }

    /// Makes the token endpoint wait this long before answering, so that concurrent refreshes overlap.
    public func setTokenDelay(_ delay: Duration) async {
        await tokenControls.state.setTokenDelay(delay)
    }

    /// Forgets every refresh token: the next refresh gets `invalid_grant`.
    public func revokeAllRefreshTokens() async {
        await tokenControls.state.revokeAllRefreshTokens()
    }

    /// Expires every access token issued so far: the APIs answer 401 `invalid_token` for them.
    public func expireAllAccessTokens() async {
        await tokenControls.state.expireAllAccessTokens()
    }
}
