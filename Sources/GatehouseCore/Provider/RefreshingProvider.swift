/// A provider whose credentials can be renewed without the user.
public protocol RefreshingProvider: AuthProvider {
    /// Returns a new credential. Keeps the old refresh token when the provider returns none.
    /// Throws ``ProviderError/invalidGrant(_:)`` when the user must sign in again,
    /// ``ProviderError/unavailable(_:)`` when the provider is down (the session is kept).
    func refresh(_ credential: Credential) async throws -> Credential
}
