import Foundation
import GatehouseCore

extension ActiveSession {
    /// How this session's person authenticated, for access rules with `require:`: the ID token's (or the provider
    /// token's) `acr`, and its `auth_time`, else when the session began (a provider token: when it was verified).
    var authentication: AccessAuthentication {
        let authTime = identity.claims["auth_time"].flatMap(TimeInterval.init).map(Date.init(timeIntervalSince1970:))
        return AccessAuthentication(acr: identity.claims["acr"], authenticatedAt: authTime ?? record.createdAt)
    }
}
