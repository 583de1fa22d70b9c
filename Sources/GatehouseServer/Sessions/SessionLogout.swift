import GatehouseCore
import Logging
import Prometheus

/// Ends a session the way every sign-out does (`DELETE /v1/session`, `POST /v1/sign-out`): deleted from the
/// shared store (so on every instance), counted and logged, then the provider's credential revoked, best
/// effort: a failing provider logout is logged and reported, and the gateway session ends all the same.
struct SessionLogout: Sendable {
    let sessions: SessionManager
    let providers: ProviderSet
    let metrics: GatewayMetrics

    /// What became of the provider's credential: `revoked`, `failed` or `not_supported`.
    func end(_ session: ActiveSession, logger: Logger) async throws -> String {
        try await sessions.end(session.id)
        metrics.logouts.increment()
        logger.notice("logout", metadata: ["event": "logout", "provider": "\(session.provider)", "session": "\(session.id)"])
        guard let revoking = providers.provider(session.provider) as? any RevokingProvider, revoking.capabilities.revocation else {
            return "not_supported"
        }
        do {
            try await revoking.revoke(session.credential)
            return "revoked"
        } catch {
            logger.warning("upstream logout failed; the gateway session ended anyway", metadata: ["provider": "\(session.provider)"])
            return "failed"
        }
    }
}
