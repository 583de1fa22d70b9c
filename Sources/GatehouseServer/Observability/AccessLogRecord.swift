/// One answered request as the access log keeps it until its line is written: plain values, taken on the
/// event loop without formatting anything (``AccessLogWriter`` renders it off the loop).
struct AccessLogRecord: Sendable {
    /// Wall-clock time of the answer.
    var time: LogTime
    var method: String
    /// The route template (`/v1/api/**`), never the path.
    var route: String
    var status: Int
    var duration: Duration
    var provider: String?
    var sessionID: String?
    var requestID: String
    /// The upstream's name, for a forwarded `/v1/api` request.
    var upstream: String?
    /// The request's trace id (32 hex digits) when tracing is on.
    var traceID: String? = nil

    /// The line's fields, sorted by name (the order both formats write them in).
    var fields: [(String, String)] {
        var fields: [(String, String)] = [("duration_ms", Self.milliseconds(duration)), ("method", method)]
        if let provider { fields.append(("provider", provider)) }
        fields.append(("request_id", requestID))
        fields.append(("route", route))
        if let sessionID { fields.append(("session", sessionID)) }
        fields.append(("status", String(status)))
        if let traceID { fields.append(("trace_id", traceID)) }
        if let upstream { fields.append(("upstream", upstream)) }
        return fields
    }

    /// Milliseconds with three decimals.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let micros = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
