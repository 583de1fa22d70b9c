/// An error meant for the client, rendered as `application/problem+json` with a stable `code`.
///
/// A struct around a code string with static values, so new codes do not break callers. Provider text
/// never goes into ``detail`` unless it is safe to show.
public struct GatehouseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable `code` member.
    public var code: String
    /// HTTP status.
    public var status: Int
    /// Human-readable explanation.
    public var detail: String
    /// Seconds for a `Retry-After` header.
    public var retryAfter: Int?

    public init(code: String, status: Int, detail: String, retryAfter: Int? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code) (\(status)): \(detail)" }

    public static func invalidRequest(_ detail: String) -> Self { .init(code: "invalid_request", status: 400, detail: detail) }
    public static func invalidGrant(_ detail: String) -> Self { .init(code: "invalid_grant", status: 400, detail: detail) }
    public static func invalidSession(_ detail: String = "The session token is missing, unknown or expired.") -> Self {
        .init(code: "invalid_session", status: 401, detail: detail)
    }
    public static func reauthenticationRequired(_ detail: String = "The provider no longer accepts this session; sign in again.") -> Self {
        .init(code: "reauthentication_required", status: 401, detail: detail)
    }
    public static func unknownProvider(_ id: String) -> Self {
        .init(code: "unknown_provider", status: 404, detail: "No provider '\(id)' is configured.")
    }
    public static func unsupported(_ detail: String) -> Self { .init(code: "unsupported_operation", status: 400, detail: detail) }
    public static func forbidden(_ code: String, _ detail: String) -> Self { .init(code: code, status: 403, detail: detail) }
    public static func upstreamUnavailable(_ detail: String, retryAfter: Int = 5) -> Self {
        .init(code: "upstream_unavailable", status: 503, detail: detail, retryAfter: retryAfter)
    }
    public static func badGateway(_ detail: String) -> Self { .init(code: "bad_gateway", status: 502, detail: detail) }
    public static func gatewayTimeout(_ detail: String) -> Self { .init(code: "upstream_timeout", status: 504, detail: detail) }
    public static func payloadTooLarge(_ detail: String) -> Self { .init(code: "payload_too_large", status: 413, detail: detail) }
    public static func notFound(_ detail: String) -> Self { .init(code: "not_found", status: 404, detail: detail) }
}
