import Foundation
import GatehouseCore
import GatehouseServer
import Logging
import PostgresNIO

/// What both commands share: their logger, notes on standard error, number formatting, and opening a store.
enum Bench {
    /// The commands' logger: warnings and errors only.
    static func logger() -> Logger {
        var logger = Logger(label: "gatehouse-bench")
        logger.logLevel = .warning
        return logger
    }

    /// Writes `[gatehouse-bench] <line>` to standard error (standard output carries the results).
    static func note(_ line: String) {
        standardError("[gatehouse-bench] \(line)")
    }

    /// Writes a line to standard error as it is.
    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// The value with one decimal, as the result lines print it.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Runs `body` with the store's connection pool (if it has one) running and the store migrated, as
    /// `gatehouse serve` opens it.
    static func withMigratedStore<T: Sendable>(_ store: any SessionStore, _ body: () async throws -> T) async throws -> T {
        try await GatewayLauncher.withRunningStore(store) {
            try await store.migrate()
            return try await body()
        }
    }

    /// Runs `body` while a PostgreSQL client of the benchmark's own runs (started as ``withMigratedStore(_:_:)``
    /// starts the store's pool: `body` begins once the pool task has begun).
    static func withRunningClient<T: Sendable>(_ client: PostgresClient, _ body: () async throws -> T) async throws -> T {
        let (begun, signal) = AsyncStream<Void>.makeStream()
        let pool = Task {
            signal.finish()
            await client.run()
        }
        defer { pool.cancel() }
        for await _ in begun {}
        return try await body()
    }
}
