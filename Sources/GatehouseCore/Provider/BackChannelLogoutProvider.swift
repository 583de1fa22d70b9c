/// A provider that may end gateway sessions by posting a logout token to the gateway (OpenID Connect
/// Back-Channel Logout 1.0).
public protocol BackChannelLogoutProvider: AuthProvider {
    /// Whether the provider file enabled it (`backchannel_logout: true`); when not, the route answers 404.
    var acceptsBackChannelLogout: Bool { get }

    /// Verifies a logout token (signature, issuer, audience, times, events, `sid`/`sub`, no `nonce`, `typ`)
    /// and returns what it names. Throws ``ProviderError/rejected(code:description:)`` when any check fails;
    /// that the `jti` is new is the caller's check, against the shared store.
    func verifyLogoutToken(_ token: String) async throws -> LogoutToken
}
