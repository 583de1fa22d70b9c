/// The provider could not be reached or did not answer in time.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What failed, in words a client may be shown (`connection refused`, `the server's TLS certificate is not
    /// trusted`): it becomes part of a problem's `detail` and of `/readyz`.
    public var description: String
    /// The library's own account (BoringSSL's codes, `errno`, the URL without its query), for the log only.
    public var cause: String?

    public init(_ description: String, cause: String? = nil) {
        self.description = description
        self.cause = cause
    }
}
