public import Foundation

/// `require:` of an access rule (RFC 9470): how strong (`acr`) or how recent (`max_age_seconds`) the session's
/// authentication must be. A session that does not meet it is refused with the `insufficient_user_authentication`
/// challenge naming what is asked, so the client can sign in again with it.
public struct StepUpRequirement: Sendable, Equatable {
    /// The authentication context classes accepted; `nil`: any.
    public var acr: [String]?
    /// The most seconds since the person authenticated; `nil`: any.
    public var maxAgeSeconds: Int?

    public init(acr: [String]? = nil, maxAgeSeconds: Int? = nil) {
        self.acr = acr
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// Whether an authentication of class `acr` made at `authenticatedAt` meets it at `now`.
    public func isMet(acr: String?, authenticatedAt: Date, now: Date) -> Bool {
        if let accepted = self.acr {
            guard let acr, accepted.contains(acr) else { return false }
        }
        if let maxAgeSeconds, now.timeIntervalSince(authenticatedAt) > TimeInterval(maxAgeSeconds) { return false }
        return true
    }
}
