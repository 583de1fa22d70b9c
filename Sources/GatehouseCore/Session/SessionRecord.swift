public import Foundation

/// A session as a store keeps it: the token only as its SHA-256, the credential sealed.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    /// Hex SHA-256 of the session token.
    public var tokenHash: String
    public var provider: String
    public var subject: String
    /// JSON of the normalized ``Identity``.
    public var identity: Data
    /// The ``Credential`` sealed by ``CredentialSealer``.
    public var sealedCredential: Data
    /// Bumped on every credential change; the compare-and-set of refreshes.
    public var credentialVersion: Int
    public var createdAt: Date
    public var lastSeenAt: Date
    /// The absolute end of the session.
    public var expiresAt: Date
    /// For a session bound to a client key (DPoP, RFC 9449): the key's RFC 7638 thumbprint; every request
    /// of the session must carry a proof signed by that key. `nil`: a bearer or cookie session.
    public var dpopThumbprint: String?
    /// The provider's session this one came from (OpenID Connect `sid`), so that the provider's back-channel
    /// logout can end it; `nil` when the provider named none.
    public var providerSessionID: String?

    public init(
        id: String, tokenHash: String, provider: String, subject: String, identity: Data, sealedCredential: Data,
        credentialVersion: Int = 1, createdAt: Date, lastSeenAt: Date, expiresAt: Date, dpopThumbprint: String? = nil,
        providerSessionID: String? = nil
    ) {
        self.id = id
        self.tokenHash = tokenHash
        self.provider = provider
        self.subject = subject
        self.identity = identity
        self.sealedCredential = sealedCredential
        self.credentialVersion = credentialVersion
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
        self.dpopThumbprint = dpopThumbprint
        self.providerSessionID = providerSessionID
    }
}
