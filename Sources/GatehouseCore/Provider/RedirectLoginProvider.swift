/// A provider the user is redirected to and that comes back to `/v1/auth/{id}/callback`.
public protocol RedirectLoginProvider: AuthProvider {
    /// The provider URL to send the user to for this transaction (carries state, PKCE, nonce).
    func authorizationURL(for transaction: LoginTransaction) throws -> String
    /// Turns the callback's query parameters into an identity and credential.
    ///
    /// The server has already matched `state` to `transaction`. Throws ``ProviderError``:
    /// `.rejected` for an `error` the provider sent, `.unavailable` when it cannot be reached.
    func completeLogin(callback: [String: String], transaction: LoginTransaction) async throws -> LoginResult
}
