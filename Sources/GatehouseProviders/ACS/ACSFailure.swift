public import GatehouseCore

/// Marks the refusals of ACS tokens (``ACSFailure``).
public enum ACSFailureKind {}

/// Why an ACS token was refused; each carries the stable problem `code` (401) and a safe reason.
public typealias ACSFailure = CredentialRefusal<ACSFailureKind>

extension CredentialRefusal where Kind == ACSFailureKind {
    static func malformed(_ reason: String) -> Self { .init(code: "malformed_token", reason: reason) }
    static func missingSignature(_ reason: String) -> Self { .init(code: "missing_signature", reason: reason) }
    static func invalidSignature(_ reason: String) -> Self { .init(code: "invalid_signature", reason: reason) }
    static func expired(_ reason: String) -> Self { .init(code: "token_expired", reason: reason) }
    static func audienceMismatch(_ reason: String) -> Self { .init(code: "audience_mismatch", reason: reason) }
    static func issuerMismatch(_ reason: String) -> Self { .init(code: "issuer_mismatch", reason: reason) }
    static func unsupported(_ reason: String) -> Self { .init(code: "unsupported_token_type", reason: reason) }
}
