import GatehouseCore
import Logging

/// Reloads the provider files and the access rules (`access:` of `gatehouse.yaml`) on SIGHUP
/// (``HangupReloader``). Both are read and validated first; if either does not validate, both old ones stay
/// in force.
struct ProviderReloader: Sendable {
    let providers: ProviderSet
    let load: @Sendable () throws -> [any AuthProvider]
    let access: AccessRules
    /// Reads `access:` again; `nil` when there is no configuration file to read.
    let loadAccess: (@Sendable () throws -> AccessPolicy)?
    let logger: Logger

    func reload() {
        do {
            let loaded = try load()
            let policy = try loadAccess?()
            providers.replace(with: loaded)
            if let policy { access.replace(with: policy) }
            logger.notice("providers reloaded", metadata: ["count": "\(loaded.count)", "access_rules": "\(policy?.rules.count ?? access.current.rules.count)"])
        } catch {
            logger.error("reload refused: keeping the previous providers and access rules", metadata: ["errors": "\(error)"])
        }
    }
}
