/// A provider that can be told at logout that a credential is no longer needed (RFC 7009, SPiD logout).
public protocol RevokingProvider: AuthProvider {
    /// Best effort: the gateway ends its session whatever this does.
    func revoke(_ credential: Credential) async throws

    /// The provider file's key that names where a sign-out revokes, for the warning when none is known
    /// (default `revocation_endpoint`).
    var revocationKey: String { get }

    /// Whether the provider file alone tells if a sign-out revokes (default `true`); `false` when the provider's
    /// own metadata may name the endpoint (OpenID discovery), so that only a started gateway can tell.
    var revocationDecidedByFile: Bool { get }
}

extension RevokingProvider {
    public var revocationKey: String { "revocation_endpoint" }
    public var revocationDecidedByFile: Bool { true }

    /// The warning for a provider whose sign-outs cannot revoke its tokens; `nil` when they can.
    public var revocationWarning: String? {
        guard !capabilities.revocation else { return nil }
        return
            "provider '\(descriptor.id)' (\(descriptor.kind)) has no \(revocationKey): signing out ends the gateway's session, but the provider's tokens stay valid until they expire; set \(revocationKey) in its file"
    }
}
