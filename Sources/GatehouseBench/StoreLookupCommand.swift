import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Logging
import PostgresNIO

/// `gatehouse-bench store-lookup`: the latency of `SessionStore.session(tokenHash:)`, the store read every
/// proxied request makes, with a given number of sessions stored.
///
/// Opens the real store (``SQLiteSessionStore`` or ``PostgresSessionStore``) and migrates it, tops the
/// `sessions` table up to `--sessions` rows with synthetic ones (rows already there are kept, so growing
/// 10 k → 1 M only inserts the difference), samples stored token hashes at random, warms up, then times
/// `--lookups` hits and `--misses` unknown hashes through the ``SessionStore`` protocol. Prints one line
/// per kind:
///
/// ```text
/// lookup store=sqlite sessions=1000000 kind=hit lookups=20000 concurrency=1 p50_us=… p90_us=… p99_us=… max_us=… mean_us=…
/// ```
struct StoreLookupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-lookup",
        abstract: "Seed a session store to N sessions and time session(tokenHash:) lookups.")

    @Option(help: "The store: sqlite or postgres.")
    var store: BenchStoreKind

    @Option(help: "sqlite: the database file (created if missing).")
    var path: String?

    @Option(help: "postgres: postgres://user@host:port/database?sslmode=disable")
    var url: String?

    @Option(help: "postgres: connections in the store's pool.")
    var poolSize: Int = 10

    @Option(help: "Sessions the store should hold (seeded up to this many; existing rows are kept).")
    var sessions: Int

    @Option(help: "Timed lookups of existing sessions.")
    var lookups: Int = 20_000

    @Option(help: "Timed lookups of unknown token hashes (0: none).")
    var misses: Int = 2_000

    @Option(help: "Untimed lookups before the timed ones.")
    var warmup: Int = 2_000

    @Option(help: "Distinct stored token hashes to pick the lookups from.")
    var sample: Int = 5_000

    @Option(help: "Concurrent lookup tasks.")
    var concurrency: Int = 1

    func validate() throws {
        switch store {
        case .sqlite where path == nil: throw ValidationError("--store sqlite needs --path")
        case .postgres where url == nil: throw ValidationError("--store postgres needs --url")
        default: break
        }
        guard sessions > 0, lookups > 0, sample > 0, concurrency > 0, poolSize > 0, warmup >= 0, misses >= 0 else {
            throw ValidationError("--sessions, --lookups, --sample, --concurrency and --pool-size must be > 0")
        }
    }

    func run() async throws {
        var logger = Logger(label: "gatehouse-bench")
        logger.logLevel = .warning
        switch store {
        case .sqlite:
            let path = path ?? ""
            let sessionStore = try SQLiteSessionStore(path: path)
            try await sessionStore.migrate()
            try await measure(sessionStore, seeder: try SQLiteSeeder(path: path))
            try sessionStore.close()
        case .postgres:
            let url = url ?? ""
            let sessionStore = try PostgresSessionStore(url: url, poolSize: poolSize, logger: logger)
            let seedClient = PostgresClient(
                configuration: try PostgresConnectionSettings(url: url, poolSize: 2).configuration, backgroundLogger: logger)
            let seedPool = Task { await seedClient.run() }
            defer { seedPool.cancel() }
            try await GatewayLauncher.withRunningStore(sessionStore) {
                // Let both pools' run() start first: PostgresNIO warns about a lease that comes before it.
                try await Task.sleep(for: .milliseconds(100))
                try await sessionStore.migrate()
                try await measure(sessionStore, seeder: PostgresSeeder(client: seedClient, logger: logger))
            }
        }
    }

    /// Seeds, samples, warms up and times; prints the result lines.
    private func measure(_ sessionStore: any SessionStore, seeder: some SessionSeeder) async throws {
        let clock = ContinuousClock()
        let seedStart = clock.now
        let inserted = try await seeder.seed(upTo: sessions)
        let seedSeconds = (clock.now - seedStart).seconds
        let stored = try await seeder.storedSessions()
        let megabytes = Double(try await seeder.storageBytes()) / 1_048_576
        note("\(store.rawValue): \(stored) sessions stored (\(inserted) seeded in \(Self.oneDecimal(seedSeconds)) s), \(Self.oneDecimal(megabytes)) MiB")

        let hashes = try await seeder.sampleTokenHashes(count: min(sample, stored))
        guard !hashes.isEmpty else { throw BenchFailure("no stored sessions to look up") }
        let hits = (0..<lookups).map { _ in hashes.randomElement()! }
        if warmup > 0 {
            _ = try await Self.time((0..<warmup).map { _ in hashes.randomElement()! }, in: sessionStore, concurrency: concurrency, expectHits: true)
        }
        let hitLatencies = try await Self.time(hits, in: sessionStore, concurrency: concurrency, expectHits: true)
        let prefix = "lookup store=\(store.rawValue) sessions=\(stored)"
        print("\(prefix) kind=hit lookups=\(lookups) concurrency=\(concurrency) \(LatencySummary(hitLatencies).fields) seed_s=\(Self.oneDecimal(seedSeconds)) size_mib=\(Self.oneDecimal(megabytes))")
        if misses > 0 {
            let unknown = (0..<misses).map { _ in RandomToken.hash(RandomToken.make()) }
            let missLatencies = try await Self.time(unknown, in: sessionStore, concurrency: concurrency, expectHits: false)
            print("\(prefix) kind=miss lookups=\(misses) concurrency=\(concurrency) \(LatencySummary(missLatencies).fields)")
        }
    }

    /// Looks up every hash, `concurrency` at a time, and returns each lookup's latency in microseconds.
    private static func time(_ hashes: [String], in store: any SessionStore, concurrency: Int, expectHits: Bool) async throws -> [Double] {
        try await withThrowingTaskGroup(of: [Double].self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    let clock = ContinuousClock()
                    var latencies: [Double] = []
                    latencies.reserveCapacity(hashes.count / concurrency + 1)
                    for index in stride(from: worker, to: hashes.count, by: concurrency) {
                        let hash = hashes[index]
                        let start = clock.now
                        let record = try await store.session(tokenHash: hash)
                        let elapsed = clock.now - start
                        if expectHits {
                            guard record?.tokenHash == hash else { throw BenchFailure("no session for stored token hash \(hash)") }
                        } else if record != nil {
                            throw BenchFailure("a session for the unknown token hash \(hash)")
                        }
                        latencies.append(elapsed.microseconds)
                    }
                    return latencies
                }
            }
            var all: [Double] = []
            for try await latencies in group { all += latencies }
            return all
        }
    }

    private func note(_ line: String) {
        FileHandle.standardError.write(Data("[gatehouse-bench] \(line)\n".utf8))
    }

    private static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
