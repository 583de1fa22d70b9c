/// What a login-page provider found in a proxied page.
public enum CaptureOutcome: Sendable, Equatable {
    /// The token to validate; the login ends with its session.
    case token(String)
    /// The site refused the sign-in (e.g. a `Denied error=access_denied` title); the login ends with this
    /// OAuth error code instead of waiting for a token that will not come.
    case denied(code: String)
}
