import Foundation
import GatehouseCore
import GatehouseStore
import Testing

/// Makes each kind of store fresh and migrated, so one behaviour suite runs against all of them.
enum StoreFactory: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqlite

    var testDescription: String { rawValue }

    /// Runs `body` with a new, empty store; an SQLite store lives in a temporary file removed afterwards.
    func withStore<T>(_ body: (any SessionStore) async throws -> T) async throws -> T {
        switch self {
        case .memory:
            let store = MemorySessionStore()
            try await store.migrate()
            return try await body(store)
        case .sqlite:
            return try await TemporaryDirectory.with { directory in
                let store = try SQLiteSessionStore(path: directory.appendingPathComponent("gatehouse.sqlite3").path)
                defer { try? store.close() }
                try await store.migrate()
                return try await body(store)
            }
        }
    }
}
