public import GatehouseCore
import Synchronization

/// The access policy in force: read by every request (`/v1/api` on both paths, `/v1/authz`, the end of a
/// login), replaced as a whole on SIGHUP, so a request sees either the old rules or the new, never a mix.
public final class AccessRules: Sendable {
    private let policy: Mutex<AccessPolicy>

    public init(_ policy: AccessPolicy) {
        self.policy = Mutex(policy)
    }

    /// The policy now.
    public var current: AccessPolicy { policy.withLock { $0 } }

    /// Puts a new policy in force.
    public func replace(with policy: AccessPolicy) {
        self.policy.withLock { $0 = policy }
    }
}
