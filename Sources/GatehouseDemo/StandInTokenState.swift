/// The state actor of a stand-in authorization server: it keeps a ``StandInTokenLedger`` and reports `Stats`.
/// The counters and switches every such server has come from the default implementations.
protocol StandInTokenState<Stats>: Actor {
    /// What the server's tokens speak for.
    associatedtype Subject: Sendable
    /// What `stats()` reports.
    associatedtype Stats: Sendable

    /// The tokens, counters and switches.
    var ledger: StandInTokenLedger<Subject> { get set }

    /// Counters and token totals so far.
    func stats() -> Stats
}

extension StandInTokenState {
    /// While on, the token endpoint and the APIs answer 503.
    var isUnavailable: Bool { ledger.isUnavailable }

    /// Counts a token-endpoint request on arrival and applies the switches: nil while the server is
    /// unavailable, else how long to wait before answering.
    func admitTokenRequest(grantType: String) -> Duration? {
        ledger.recordTokenRequest(grantType: grantType)
        return ledger.isUnavailable ? nil : ledger.tokenDelay
    }

    func recordTokenFailure() {
        ledger.recordTokenFailure()
    }

    func setUnavailable(_ unavailable: Bool) {
        ledger.isUnavailable = unavailable
    }

    func setTokenDelay(_ delay: Duration) {
        ledger.tokenDelay = delay
    }

    func revokeAllRefreshTokens() {
        ledger.revokeAllRefreshTokens()
    }

    func expireAllAccessTokens() {
        ledger.expireAllAccessTokens()
    }
}
