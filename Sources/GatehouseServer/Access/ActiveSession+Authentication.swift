import Foundation
import GatehouseCore

extension ActiveSession {
    /// How this session's person authenticated, for access rules with `require:`: the `acr` and `auth_time` an `oidc`
    /// login recorded from the ID token, else the same claims of another kind's answer or of a provider token, else
    /// when the session began (a provider token: when it was verified).
    var authentication: AccessAuthentication {
        let claimedTime = identity.claims["auth_time"].flatMap(TimeInterval.init).map(Date.init(timeIntervalSince1970:))
        return AccessAuthentication(
            acr: identity.acr ?? identity.claims["acr"], authenticatedAt: identity.authTime ?? claimedTime ?? record.createdAt)
    }
}
