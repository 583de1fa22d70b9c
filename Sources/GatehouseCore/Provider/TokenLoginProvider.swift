/// A provider whose token was captured by the client or by the gateway's login-page proxy (`acs`, `capture`).
public protocol TokenLoginProvider: AuthProvider {
    /// Validates a captured token and returns the identity it proves.
    func validateToken(_ token: String) async throws -> LoginResult
}
