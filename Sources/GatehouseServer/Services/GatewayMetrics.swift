import Foundation
import Prometheus
import Synchronization

/// The gateway's Prometheus metrics, on a registry of its own (no global bootstrap, so several
/// gateways can live in one test process).
///
/// Unlabelled totals (kept for dashboards that use them) and labelled series: requests by route template,
/// method and status class with a latency histogram per route, upstream latency, logins and refreshes by
/// provider and outcome, store operations' latency and errors, policy denials by rule.
final class GatewayMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let logins: Counter
    let loginFailures: Counter
    let refreshes: Counter
    let refreshFailures: Counter
    let proxiedRequests: Counter
    let upstreamErrors: Counter
    let relayedRequests: Counter
    let laneRequests: Counter
    let upgradedConnections: Counter
    let relayedRefusals: Counter
    let relayedAuthz: Counter
    let logouts: Counter
    /// Sessions in the store, as its last count said (``SessionSweeper``).
    let activeSessions: Gauge

    /// Labelled series, made once per label set: the registry's own look-up formats names on every call.
    private let requestSeries = Mutex<[RequestKey: RequestSeries]>([:])
    private let durationSeries = Mutex<[SeriesKey: DurationHistogram]>([:])
    private let labelledCounters = Mutex<[LabelledKey: Counter]>([:])

    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    /// A request's counter and its route's histogram, found with one look-up per request.
    private struct RequestSeries {
        let counter: Counter
        let duration: DurationHistogram
    }

    /// A histogram's name and its one label's value.
    private struct SeriesKey: Hashable {
        let name: String
        let label: String
    }

    private struct LabelledKey: Hashable {
        let name: String
        let labels: [String]
    }

    /// Latency buckets, 1 ms to 10 s.
    private static let buckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .microseconds(2_500_000), .seconds(5), .seconds(10),
    ]

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
        laneRequests = counter(
            "relay_lane_requests",
            "Of the relayed requests, those served on the relay's byte lane (simple GETs on HTTP/1.1, heads read and written as bytes).")
        relayedAuthz = counter("relayed_authz", "Forward-auth calls (/v1/authz) the event-loop relay answered itself, allowed or refused.")
        relayedRefusals = counter("relayed_refusals", "Requests to /v1/api the event-loop relay refused itself (the one decision said no).")
        upgradedConnections = counter(
            "upgraded_connections", "WebSocket handshakes on /v1/api the backend accepted: connections tunnelled byte for byte.")
        upstreamErrors = counter("upstream_errors", "Upstream requests that failed to connect or timed out.")
        logouts = counter("logouts", "Sessions ended by the client.")
        activeSessions = registry.makeGauge(
            descriptor: .init(
                namespace: "gatehouse", metricName: "active_sessions", unitName: "",
                helpText: "Sessions in the store (counted after each sweep, once a minute)."))
    }

    /// The TLS leaf's `notAfter` (`gatehouse_tls_certificate_expiry_timestamp_seconds`): only with `tls:`, so
    /// the series is absent without it.
    func tlsCertificateExpires(at date: Date) {
        registry.makeGauge(
            descriptor: .init(
                namespace: "gatehouse", metricName: "tls_certificate_expiry_timestamp_seconds", unitName: "",
                helpText: "When the TLS certificate served on the listener expires (Unix time), as last loaded.")
        ).set(date.timeIntervalSince1970)
    }

    /// Counts a request the access policy refused (`gatehouse_access_denials_total{rule}`).
    func accessDenied(rule: String) {
        labelled("access_denials", "Requests the access policy refused, by rule.", [("rule", rule)]).increment()
    }

    /// One answered request: `gatehouse_http_requests_total{route,method,status}` (status class, `2xx`…) and
    /// `gatehouse_http_request_duration_seconds{route}`.
    func request(route: String, method: String, status: Int, duration: Duration) {
        let key = RequestKey(route: route, method: method, status: status / 100)
        let found = requestSeries.withLock { series in series[key] }
        let request = found ?? newRequestSeries(key)
        request.counter.increment()
        request.duration.record(duration)
    }

    /// The series of a request key seen for the first time.
    private func newRequestSeries(_ key: RequestKey) -> RequestSeries {
        let duration = histogram(
            "http_request_duration", "Time from the request head to the end of the answer, by route template.", label: ("route", key.route))
        return requestSeries.withLock { series in
            if let made = series[key] { return made }
            let counter = registry.makeCounter(
                descriptor: .init(
                    namespace: "gatehouse", metricName: "http_requests", unitName: "total",
                    helpText: "Requests answered, by route template, method and status class."),
                labels: [("route", key.route), ("method", key.method), ("status", "\(key.status)xx")])
            let made = RequestSeries(counter: counter, duration: duration)
            series[key] = made
            return made
        }
    }

    /// One upstream call: `gatehouse_upstream_duration_seconds{upstream}` (`backend` or `provider_api`).
    func upstream(_ upstream: String, duration: Duration) {
        histogram(
            "upstream_duration", "Time from sending a request upstream to the end of its answer's head, by upstream.", label: ("upstream", upstream)
        )
        .record(duration)
    }

    /// A call to an upstream of `/v1/api` that could not be made or timed out:
    /// `gatehouse_upstream_failures_total{upstream}` (its name; `backend` for the default), besides ``upstreamErrors``.
    func upstreamFailed(_ upstream: String) {
        labelled("upstream_failures", "Calls to an upstream of /v1/api that failed to connect or timed out, by upstream.", [("upstream", upstream)])
            .increment()
    }

    /// A finished login: `gatehouse_login_attempts_total{provider,outcome}` (`succeeded`, `refused`, `failed`).
    func login(provider: String, outcome: String) {
        labelled("login_attempts", "Logins by provider and outcome.", [("provider", provider), ("outcome", outcome)]).increment()
    }

    /// A refresh: `gatehouse_refresh_attempts_total{provider,outcome}` (`refreshed`, `joined` a refresh in
    /// flight, `failed`, `refused` by the provider).
    func refresh(provider: String, outcome: String) {
        labelled(
            "refresh_attempts", "Refreshes by provider and outcome (joined: answered by a refresh already in flight).",
            [("provider", provider), ("outcome", outcome)]
        )
        .increment()
    }

    /// A store operation: `gatehouse_store_operation_duration_seconds{operation}`, and
    /// `gatehouse_store_errors_total{operation}` when it failed.
    func storeOperation(_ operation: String, duration: Duration, failed: Bool) {
        histogram("store_operation_duration", "Session store operations' latency, by operation.", label: ("operation", operation))
            .record(duration)
        if failed {
            labelled("store_errors", "Session store operations that failed, by operation.", [("operation", operation)]).increment()
        }
    }

    /// The Prometheus text exposition.
    func render() -> String { registry.emitToString() }

    private func labelled(_ name: String, _ help: String, _ labels: [(String, String)]) -> Counter {
        let key = LabelledKey(name: name, labels: labels.map(\.1))
        return labelledCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(
                descriptor: .init(namespace: "gatehouse", metricName: name, unitName: "total", helpText: help), labels: labels)
            counters[key] = counter
            return counter
        }
    }

    private func histogram(_ name: String, _ help: String, label: (String, String)) -> DurationHistogram {
        let key = SeriesKey(name: name, label: label.1)
        return durationSeries.withLock { series in
            if let histogram = series[key] { return histogram }
            let histogram = registry.makeDurationHistogram(
                descriptor: .init(namespace: "gatehouse", metricName: name, unitName: "seconds", helpText: help), labels: [label],
                buckets: Self.buckets)
            series[key] = histogram
            return histogram
        }
    }
}
