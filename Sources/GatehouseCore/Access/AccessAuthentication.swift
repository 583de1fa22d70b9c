public import Foundation

/// How the session the access rules judge was authenticated, for rules with ``AccessRule/require``: the ID token's
/// `acr`, and when the person authenticated (its `auth_time`, else when the session began).
public struct AccessAuthentication: Sendable, Equatable {
    public var acr: String?
    public var authenticatedAt: Date

    public init(acr: String?, authenticatedAt: Date) {
        self.acr = acr
        self.authenticatedAt = authenticatedAt
    }
}
