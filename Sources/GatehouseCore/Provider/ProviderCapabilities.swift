/// The capability flags reported by `GET /v1/providers`.
public struct ProviderCapabilities: Sendable, Equatable, Codable {
    public var refresh: Bool
    public var revocation: Bool
    public var expiryKnown: Bool
    public var userinfo: Bool
    public var legacyCapture: Bool

    public init(refresh: Bool, revocation: Bool, expiryKnown: Bool, userinfo: Bool, legacyCapture: Bool) {
        self.refresh = refresh
        self.revocation = revocation
        self.expiryKnown = expiryKnown
        self.userinfo = userinfo
        self.legacyCapture = legacyCapture
    }

    enum CodingKeys: String, CodingKey {
        case refresh, revocation, userinfo
        case expiryKnown = "expiry_known"
        case legacyCapture = "legacy_capture"
    }
}
