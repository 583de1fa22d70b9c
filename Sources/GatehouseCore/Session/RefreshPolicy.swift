public import Foundation

/// When a credential is refreshed before it is used.
///
/// The skew is min(configured skew, half the credential's lifetime), so short-lived tokens are not
/// refreshed on every call.
public struct RefreshPolicy: Sendable, Equatable {
    public var skew: TimeInterval

    public init(skew: TimeInterval = 30) {
        self.skew = skew
    }

    /// The effective skew for one credential.
    public func effectiveSkew(for credential: Credential) -> TimeInterval {
        guard let expiresAt = credential.expiresAt else { return skew }
        let lifetime = max(0, expiresAt.timeIntervalSince(credential.issuedAt))
        return min(skew, lifetime / 2)
    }

    /// Whether to refresh before proxying: refreshable and expiring within the skew.
    public func needsRefresh(_ credential: Credential, now: Date) -> Bool {
        guard credential.isRefreshable, let expiresAt = credential.expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= effectiveSkew(for: credential)
    }
}
