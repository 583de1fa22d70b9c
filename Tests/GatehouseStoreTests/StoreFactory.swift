import Foundation
import GatehouseCore
import GatehouseStore
import Logging
import Testing

/// Makes each kind of store fresh and migrated, so one behaviour suite runs against all of them.
enum StoreFactory: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqlite
    case postgres

    /// Every store; `postgres` only when a server can be started here (see ``PostgresTestServer/isEnabled``).
    static var allCases: [StoreFactory] {
        PostgresTestServer.isEnabled ? [.memory, .sqlite, .postgres] : [.memory, .sqlite]
    }

    var testDescription: String { rawValue }

    /// Runs `body` with two migrated SQLite stores on one fresh file (its path first), as two gateway processes
    /// sharing it would have them.
    static func withTwoSQLiteStores(_ body: (String, SQLiteSessionStore, SQLiteSessionStore) async throws -> Void) async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.appendingPathComponent("gatehouse.sqlite3").path
            let first = try SQLiteSessionStore(path: path)
            defer { try? first.close() }
            let second = try SQLiteSessionStore(path: path)
            defer { try? second.close() }
            try await first.migrate()
            try await second.migrate()
            try await body(path, first, second)
        }
    }

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
        case .postgres:
            let url = try await PostgresTestServer.shared.makeDatabase()
            return try await Self.withPostgresStore(url: url) { store in
                try await store.migrate()
                return try await body(store)
            }
        }
    }

    /// Runs `body` with a store on `url` whose connection pool runs for the duration.
    static func withPostgresStore<T>(
        url: String, operationTimeout: Duration = .seconds(60), silenceLimit: Duration = .seconds(60),
        _ body: (PostgresSessionStore) async throws -> T
    ) async throws -> T {
        // Small pools (many suites run in parallel on one server) and patient deadlines (a loaded CI machine):
        // these tests prove behaviour, not speed. The outage tests pass the store's own deadlines.
        let store = try PostgresSessionStore(
            url: url, poolSize: 4, operationTimeout: operationTimeout, silenceLimit: silenceLimit, logger: Logger(label: "test.postgres"))
        let pool = Task { try? await store.run() }
        defer { pool.cancel() }
        return try await body(store)
    }
}
