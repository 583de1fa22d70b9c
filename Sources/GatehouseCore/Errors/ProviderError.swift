/// What went wrong talking to a provider, in terms the gateway acts on.
public enum ProviderError: Error, Sendable, Equatable {
    /// The grant (code or refresh token) is no longer valid: the user must sign in again.
    case invalidGrant(String)
    /// The provider is down, slow or answered 5xx: try again later, keep the session.
    case unavailable(String)
    /// The provider refused with an OAuth error code (`access_denied`, `invalid_client`, …).
    case rejected(code: String, description: String)
    /// The provider's answer could not be understood (not JSON, missing fields, bad signature).
    case invalidResponse(String)
    /// The provider now vouches for another identity than the session's (e.g. a refreshed ID token
    /// naming another subject): the session's identity is void and the session must end.
    case identityVoid(code: String, description: String)
}
