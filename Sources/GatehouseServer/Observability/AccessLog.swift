import Logging

/// The access log and the request metrics: one line and one count per answered request, from the router
/// (``AccessLogMiddleware``) and from the event-loop relay alike. Never a token, never a query string.
struct AccessLog: Sendable {
    let logger: Logger
    let metrics: GatewayMetrics
    /// `logging.access_log`; the metrics are counted either way.
    let enabled: Bool

    /// The route of requests no route matched (a 404 or 405).
    static let unmatchedRoute = "unmatched"

    /// Records one answer. `route` is the route template (`/v1/api/**`), never the path itself.
    /// `upstream`: the upstream a `/v1/api` request went to (its name; `backend` for the default).
    func record(
        method: String, route: String, status: Int, duration: Duration, provider: String?, sessionID: String?, requestID: String,
        upstream: String? = nil
    ) {
        metrics.request(route: route, method: method, status: status, duration: duration)
        guard enabled else { return }
        var metadata: Logger.Metadata = [
            "method": .string(method), "route": .string(route), "status": .stringConvertible(status),
            "duration_ms": .string(Self.milliseconds(duration)), "request_id": .string(requestID),
        ]
        if let provider { metadata["provider"] = .string(provider) }
        if let sessionID { metadata["session"] = .string(sessionID) }
        if let upstream { metadata["upstream"] = .string(upstream) }
        logger.info("request", metadata: metadata)
    }

    /// Milliseconds with three decimals.
    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
