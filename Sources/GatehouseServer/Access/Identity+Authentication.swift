import Foundation
import GatehouseCore

extension Identity {
    /// How this person authenticated: the `acr` and `auth_time` an `oidc` login recorded from the ID token, else the
    /// same claims of another kind's answer or of a provider token, else `start` (when the session began, or a provider
    /// token was verified).
    func authentication(since start: Date) -> AccessAuthentication {
        let claimedTime = claims["auth_time"].flatMap(TimeInterval.init).map(Date.init(timeIntervalSince1970:))
        return AccessAuthentication(acr: acr ?? claims["acr"], authenticatedAt: authTime ?? claimedTime ?? start)
    }
}
