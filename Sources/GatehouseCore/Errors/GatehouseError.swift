/// An error meant for the client, rendered as `application/problem+json` with a stable ``ProblemCode``.
///
/// Provider text never goes into ``detail`` unless it is safe to show.
public struct GatehouseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable `code` member.
    public var code: ProblemCode
    /// HTTP status.
    public var status: Int
    /// Human-readable explanation.
    public var detail: String
    /// Seconds for a `Retry-After` header.
    public var retryAfter: Int?
    /// A fresh nonce for the client's next DPoP proof (the `DPoP-Nonce` header).
    public var dpopNonce: String?
    /// A refused provider-issued bearer token: the 401 challenges with `Bearer error="invalid_token"` (RFC 6750 §3).
    public var challengesBearer = false
    /// The scopes the challenge of an `insufficient_scope` answer names (`scope="…"`, RFC 6750 §3.1).
    public var requiredScope: [String]?
    /// What the challenge of a `step_up_required` answer asks for (`acr_values`, `max_age`; RFC 9470 §3).
    public var stepUp: StepUpRequirement?
    /// Where a browser is sent instead of being shown the problem (`Location`; a step-up asked of a navigation: 303 to
    /// the login that can meet it).
    public var location: String?

    public init(code: ProblemCode, status: Int, detail: String, retryAfter: Int? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code) (\(status)): \(detail)" }

    public static func invalidRequest(_ detail: String) -> Self { .init(code: .invalidRequest, status: 400, detail: detail) }
    public static func invalidGrant(_ detail: String) -> Self { .init(code: .invalidGrant, status: 400, detail: detail) }
    public static func invalidSession(_ detail: String = "The session token is missing, unknown or expired.") -> Self {
        .init(code: .invalidSession, status: 401, detail: detail)
    }
    public static func reauthenticationRequired(_ detail: String = "The provider no longer accepts this session; sign in again.") -> Self {
        .init(code: .reauthenticationRequired, status: 401, detail: detail)
    }
    public static func unknownProvider(_ id: String) -> Self {
        .init(code: .unknownProvider, status: 404, detail: "No provider '\(id)' is configured.")
    }
    public static func unsupported(_ detail: String) -> Self { .init(code: .unsupportedOperation, status: 400, detail: detail) }
    public static func forbidden(_ code: ProblemCode, _ detail: String) -> Self { .init(code: code, status: 403, detail: detail) }
    public static func upstreamUnavailable(_ detail: String, retryAfter: Int = 5) -> Self {
        .init(code: .upstreamUnavailable, status: 503, detail: detail, retryAfter: retryAfter)
    }
    public static func badGateway(_ detail: String) -> Self { .init(code: .badGateway, status: 502, detail: detail) }
    public static func gatewayTimeout(_ detail: String) -> Self { .init(code: .upstreamTimeout, status: 504, detail: detail) }
    public static func payloadTooLarge(_ detail: String) -> Self { .init(code: .payloadTooLarge, status: 413, detail: detail) }
    public static func notFound(_ detail: String) -> Self { .init(code: .notFound, status: 404, detail: detail) }
    /// A DPoP proof was refused: 401 on a session's request, 400 at a sign-in (RFC 9449 §5, §7.1).
    public static func invalidDPoPProof(_ detail: String, status: Int = 401) -> Self {
        .init(code: .invalidDPoPProof, status: status, detail: detail)
    }
    /// The proof needs the gateway's current nonce, which the answer carries.
    public static func useDPoPNonce(_ nonce: String, status: Int = 401) -> Self {
        var error = Self(code: .useDPoPNonce, status: status, detail: "The DPoP proof must carry the nonce of the DPoP-Nonce header.")
        error.dpopNonce = nonce
        return error
    }
    public static func invalidToken(_ detail: String) -> Self { .init(code: .invalidToken, status: 401, detail: detail) }
    /// A provider-issued bearer token the gateway does not accept (RFC 6750 `invalid_token`).
    public static func invalidBearerToken(_ detail: String) -> Self {
        var error = Self(code: .invalidToken, status: 401, detail: detail)
        error.challengesBearer = true
        return error
    }
    /// A valid provider-issued bearer token without every scope the gateway requires: 403, challenged with
    /// `Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1).
    public static func insufficientScope(_ required: [String]) -> Self {
        var error = Self(
            code: .insufficientScope, status: 403,
            detail: "The token is valid but does not grant the scope(s) this gateway requires: \(required.joined(separator: " ")).")
        error.challengesBearer = true
        error.requiredScope = required
        return error
    }
    /// An access rule's `require:` the session does not meet: 401, challenged with
    /// `Bearer error="insufficient_user_authentication"` and what to sign in again with (RFC 9470).
    public static func stepUpRequired(rule: String, _ requirement: StepUpRequirement) -> Self {
        var error = Self(
            code: .stepUpRequired, status: 401,
            detail: "The access rule '\(rule)' asks for a stronger or more recent sign-in than this session's; sign in again as the challenge says.")
        error.stepUp = requirement
        return error
    }
    /// A provider that could not be asked (its keys, discovery or introspection endpoint unreachable).
    public static func providerUnavailable(_ detail: String, retryAfter: Int = 5) -> Self {
        .init(code: .providerUnavailable, status: 503, detail: detail, retryAfter: retryAfter)
    }
    public static func storeUnavailable(_ detail: String = "The session store cannot be reached. Try again shortly.") -> Self {
        .init(code: .storeUnavailable, status: 503, detail: detail, retryAfter: 5)
    }
}
