import Foundation
import GatehouseCore

extension ActiveSession {
    /// How this session's person authenticated, for access rules with `require:` (``Identity/authentication(since:)``,
    /// the session's start when nothing says when).
    var authentication: AccessAuthentication { identity.authentication(since: record.createdAt) }
}
