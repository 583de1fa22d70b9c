/// Why a credential the client presented itself (an assertion, a token) was refused: the stable problem
/// `code` the gateway answers with (401) and a reason that is safe to show, since it only describes the
/// client's own credential.
///
/// `Kind` is a marker that keeps each provider kind's refusals a type of their own (`ACSFailure`,
/// `BrowserIDFailure`), with their own named factories, while they share this one definition.
public struct CredentialRefusal<Kind>: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable `code` member of the problem document.
    public var code: String
    /// What exactly is wrong.
    public var reason: String

    /// Creates a refusal with a code and a reason.
    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }

    /// What the login routes turn into a 401 problem with ``code``.
    public var providerError: ProviderError { .rejected(code: code, description: reason) }
}
