/// A provider that can be told at logout that a credential is no longer needed (RFC 7009, SPiD logout).
public protocol RevokingProvider: AuthProvider {
    /// Best effort: the gateway ends its session whatever this does.
    func revoke(_ credential: Credential) async throws
}
