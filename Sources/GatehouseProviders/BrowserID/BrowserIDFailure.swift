public import GatehouseCore

/// Marks the refusals of BrowserID assertions (``BrowserIDFailure``).
public enum BrowserIDFailureKind {}

/// Why a BrowserID assertion was refused. Each value carries the stable problem `code` the gateway
/// answers with (401) and a reason that is safe to show: it only describes the client's own assertion.
public typealias BrowserIDFailure = CredentialRefusal<BrowserIDFailureKind>

extension CredentialRefusal where Kind == BrowserIDFailureKind {
    /// Not a backed assertion: bad encoding, bad JSON, a missing or mistyped member.
    static func malformed(_ reason: String) -> Self { .init(code: "malformed_assertion", reason: reason) }
    /// Longer than the size limit.
    static func tooLarge(_ reason: String) -> Self { .init(code: "assertion_too_large", reason: reason) }
    /// The assertion's `exp` has passed.
    static func assertionExpired(_ reason: String) -> Self { .init(code: "assertion_expired", reason: reason) }
    /// The certificate's `exp` has passed.
    static func certificateExpired(_ reason: String) -> Self { .init(code: "certificate_expired", reason: reason) }
    /// `iat` or `nbf` lies in the future.
    static func notYetValid(_ reason: String) -> Self { .init(code: "not_yet_valid", reason: reason) }
    /// `aud` is not one of the provider's audiences (scheme, host and port).
    static func audienceMismatch(_ reason: String) -> Self { .init(code: "audience_mismatch", reason: "audience mismatch: \(reason)") }
    /// The issuer may not certify this email address.
    static func untrustedIssuer(_ reason: String) -> Self { .init(code: "untrusted_issuer", reason: reason) }
    /// A signature does not verify.
    static func invalidSignature(_ reason: String) -> Self { .init(code: "invalid_signature", reason: reason) }
    /// An algorithm or key this verifier refuses (unknown `alg`, key/label mismatch, RSA below 1024 bits).
    static func unsupportedAlgorithm(_ reason: String) -> Self { .init(code: "unsupported_algorithm", reason: reason) }
    /// More than one certificate.
    static func unsupportedChain(_ reason: String) -> Self { .init(code: "unsupported_certificate_chain", reason: reason) }
    /// The remote verifier said no.
    static func remoteRefused(_ reason: String) -> Self { .init(code: "verification_failed", reason: reason) }
}
