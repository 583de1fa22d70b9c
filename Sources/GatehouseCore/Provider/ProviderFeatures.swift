/// Per-instance facts for the capability flags that conformance alone cannot tell.
public struct ProviderFeatures: Sendable, Equatable {
    /// A revocation or logout endpoint is configured.
    public var revocation: Bool
    /// Credentials carry an expiry.
    public var expiryKnown: Bool
    /// Identity is fetched from a userinfo endpoint.
    public var userinfo: Bool

    public init(revocation: Bool = false, expiryKnown: Bool = false, userinfo: Bool = false) {
        self.revocation = revocation
        self.expiryKnown = expiryKnown
        self.userinfo = userinfo
    }
}
