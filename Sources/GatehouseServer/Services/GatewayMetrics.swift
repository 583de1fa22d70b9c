import Prometheus

/// The gateway's Prometheus metrics, on a registry of its own (no global bootstrap, so several
/// gateways can live in one test process).
final class GatewayMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let logins: Counter
    let loginFailures: Counter
    let refreshes: Counter
    let refreshFailures: Counter
    let proxiedRequests: Counter
    let upstreamErrors: Counter
    let relayedRequests: Counter
    let upgradedConnections: Counter
    let relayedAuthz: Counter
    let logouts: Counter

    init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        func counter(_ name: String, _ help: String) -> Counter {
            registry.makeCounter(descriptor: .init(namespace: "gatehouse", metricName: name, unitName: "total", helpText: help))
        }
        logins = counter("logins", "Sessions created.")
        loginFailures = counter("login_failures", "Logins that failed at the callback or exchange.")
        refreshes = counter("refreshes", "Provider credentials refreshed.")
        refreshFailures = counter("refresh_failures", "Provider refreshes that failed.")
        proxiedRequests = counter("proxied_requests", "Requests forwarded upstream.")
        relayedRequests = counter("relayed_requests", "Requests to /v1/api forwarded by the event-loop relay (also counted in proxied_requests).")
        relayedAuthz = counter("relayed_authz", "Forward-auth calls (/v1/authz) the event-loop relay answered from memory.")
        upgradedConnections = counter("upgraded_connections", "WebSocket handshakes on /v1/api the backend accepted: connections tunnelled byte for byte.")
        upstreamErrors = counter("upstream_errors", "Upstream requests that failed to connect or timed out.")
        logouts = counter("logouts", "Sessions ended by the client.")
    }

    /// Counts a request the access policy refused (`gatehouse_access_denials_total{rule}`); the registry keeps
    /// one counter per rule name.
    func accessDenied(rule: String) {
        registry.makeCounter(
            descriptor: .init(namespace: "gatehouse", metricName: "access_denials", unitName: "total", helpText: "Requests the access policy refused, by rule."),
            labels: [("rule", rule)]
        ).increment()
    }

    /// The Prometheus text exposition.
    func render() -> String { registry.emitToString() }
}
