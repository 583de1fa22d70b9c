public import GatehouseCore

/// Why an ACS token was refused; each carries the stable problem `code` (401) and a safe reason.
public struct ACSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var reason: String

    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    /// What the token route turns into a 401 problem with ``code``.
    public var providerError: ProviderError { .rejected(code: code, description: reason) }

    static func malformed(_ reason: String) -> Self { .init(code: "malformed_token", reason: reason) }
    static func missingSignature(_ reason: String) -> Self { .init(code: "missing_signature", reason: reason) }
    static func invalidSignature(_ reason: String) -> Self { .init(code: "invalid_signature", reason: reason) }
    static func expired(_ reason: String) -> Self { .init(code: "token_expired", reason: reason) }
    static func audienceMismatch(_ reason: String) -> Self { .init(code: "audience_mismatch", reason: reason) }
    static func issuerMismatch(_ reason: String) -> Self { .init(code: "issuer_mismatch", reason: reason) }
    static func unsupported(_ reason: String) -> Self { .init(code: "unsupported_token_type", reason: reason) }
}
