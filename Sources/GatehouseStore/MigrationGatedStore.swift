public import GatehouseCore
import Synchronization

/// A store whose schema could not be migrated at start-up because the database was unreachable.
///
/// The gateway still starts (liveness passes, `/readyz` fails) and every operation answers
/// ``StoreUnavailableError`` — 503 `store_unavailable` with `Retry-After` — until ``migrate()`` succeeds;
/// from then on each call goes straight to the base store. Nothing is read from or written to an
/// unmigrated schema.
public final class MigrationGatedStore: ForwardingSessionStore {
    /// The store that does the work once migrated.
    public let base: any SessionStore
    private let migrated = Atomic<Bool>(false)

    public init(base: any SessionStore) {
        self.base = base
    }

    /// Whether the schema has been migrated (and calls pass through).
    public var isMigrated: Bool { migrated.load(ordering: .acquiring) }

    public func migrate() async throws {
        try await base.migrate()
        migrated.store(true, ordering: .releasing)
    }

    /// The base store once migrated; until then every call fails as the database is unreachable.
    public var forwardee: any SessionStore {
        get throws {
            guard isMigrated else { throw StoreUnavailableError(reason: "the schema is not migrated yet (the store was unreachable at start-up)") }
            return base
        }
    }
}
