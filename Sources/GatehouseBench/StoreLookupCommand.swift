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
/// lookup store=sqlite sessions=1000000 kind=hit lookups=20000 concurrency=1 p50_us=… p90_us=… p99_us=… max_us=… mean_us=… seeded=… seed_s=… size_mib=…
/// ```
///
/// With `--session-cache` (postgres only) the lookups go through a ``CachingSessionStore`` over the
/// PostgreSQL store, its change feed following as in the gateway (`store.session_cache_seconds`). The
/// warm-up then first looks up every sampled session once, so the timed hits are served from memory; the
/// lines carry `cache_s=<time to live>`, and the hit line `warmed=<sessions cached>` and `from_memory=all`
/// when it could check that no timed hit read the database (feed listening before and after, every sampled
/// session cached, no change notification, all within the time to live), else `from_memory=unverified`.
/// Misses are never cached: they read PostgreSQL every time.
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

    @Flag(help: "postgres: look up through the gateway's session cache (CachingSessionStore with its change feed).")
    var sessionCache = false

    @Option(help: "With --session-cache: seconds a cached session is served from memory.")
    var cacheSeconds: Int = 30

    func validate() throws {
        switch store {
        case .sqlite where path == nil: throw ValidationError("--store sqlite needs --path")
        case .postgres where url == nil: throw ValidationError("--store postgres needs --url")
        default: break
        }
        guard sessions > 0, lookups > 0, sample > 0, concurrency > 0, poolSize > 0, warmup >= 0, misses >= 0 else {
            throw ValidationError("--sessions, --lookups, --sample, --concurrency and --pool-size must be > 0")
        }
        if sessionCache {
            guard store == .postgres else { throw ValidationError("--session-cache needs --store postgres (its change feed is LISTEN/NOTIFY)") }
            guard poolSize >= 2 else {
                throw ValidationError("--session-cache needs a --pool-size of 2 or more (the change feed holds one connection)")
            }
            guard cacheSeconds > 0 else { throw ValidationError("--cache-seconds must be > 0") }
        }
    }

    func run() async throws {
        let logger = Bench.logger()
        switch store {
        case .sqlite:
            let path = path ?? ""
            let sessionStore = try SQLiteSessionStore(path: path)
            try await Bench.withMigratedStore(sessionStore) {
                try await measure(sessionStore, seeder: try SQLiteSeeder(path: path), cache: nil)
            }
            try sessionStore.close()
        case .postgres:
            let url = url ?? ""
            let sessionStore = try PostgresSessionStore(url: url, poolSize: poolSize, logger: logger)
            let seedClient = PostgresClient(
                configuration: try PostgresConnectionSettings(url: url, poolSize: 2).configuration, backgroundLogger: logger)
            try await Bench.withRunningClient(seedClient) {
                try await Bench.withMigratedStore(sessionStore) {
                    let seeder = PostgresSeeder(client: seedClient, logger: logger)
                    guard sessionCache else {
                        return try await measure(sessionStore, seeder: seeder, cache: nil)
                    }
                    let cache = CachingSessionStore(base: sessionStore, timeToLive: TimeInterval(cacheSeconds))
                    let feed = try await SessionCacheFeed.follow(sessionStore, into: cache)
                    do {
                        try await measure(cache, seeder: seeder, cache: feed)
                    } catch {
                        await feed.stop()
                        throw error
                    }
                    await feed.stop()
                }
            }
        }
    }

    /// Seeds, samples, warms up and times; prints the result lines. With `cache`, `sessionStore` is its
    /// ``CachingSessionStore``.
    private func measure(_ sessionStore: any SessionStore, seeder: some SessionSeeder, cache: SessionCacheFeed?) async throws {
        let clock = ContinuousClock()
        let seedStart = clock.now
        let inserted = try await seeder.seed(upTo: sessions)
        let seedSeconds = (clock.now - seedStart).seconds
        let stored = try await seeder.storedSessions()
        let megabytes = Double(try await seeder.storageBytes()) / 1_048_576
        Bench.note(
            "\(store.rawValue): \(stored) sessions stored (\(inserted) seeded in \(Bench.oneDecimal(seedSeconds)) s), \(Bench.oneDecimal(megabytes)) MiB"
        )

        let hashes = try await seeder.sampleTokenHashes(count: min(sample, stored))
        guard !hashes.isEmpty else { throw BenchFailure("no stored sessions to look up") }
        let hits = (0..<lookups).map { _ in hashes.randomElement()! }
        // With the cache: every sampled session once, so that each timed hit finds its copy in memory.
        let warmStart = clock.now
        let changesAtWarmStart = cache?.changeCount ?? 0
        if cache != nil {
            _ = try await Self.time(hashes, in: sessionStore, concurrency: concurrency, expectHits: true)
        }
        if warmup > 0 {
            _ = try await Self.time((0..<warmup).map { _ in hashes.randomElement()! }, in: sessionStore, concurrency: concurrency, expectHits: true)
        }
        let cachedBefore = cache?.cache.cachedCount ?? 0
        let listeningBefore = cache?.cache.isSynchronized ?? false
        let hitLatencies = try await Self.time(hits, in: sessionStore, concurrency: concurrency, expectHits: true)
        var cacheFields = ""
        if let cache {
            // No copy can have been dropped: the feed listened throughout (feedStopped() would empty the cache),
            // nothing was announced (no eviction), all fits (no capacity eviction), and no copy outlived its time.
            let elapsed = (clock.now - warmStart).seconds
            let fromMemory =
                listeningBefore && cache.cache.isSynchronized && cachedBefore >= hashes.count
                && cache.changeCount == changesAtWarmStart && elapsed < Double(cacheSeconds)
            if !fromMemory {
                Bench.note(
                    "session cache: cannot vouch that every timed hit came from memory (listening \(listeningBefore) → \(cache.cache.isSynchronized), \(cachedBefore) of \(hashes.count) sampled sessions cached, \(cache.changeCount - changesAtWarmStart) change notifications, \(Bench.oneDecimal(elapsed)) s since warm-up vs a \(cacheSeconds) s time to live)"
                )
            }
            cacheFields = " warmed=\(cachedBefore) from_memory=\(fromMemory ? "all" : "unverified")"
        }
        let prefix = "lookup store=\(store.rawValue)\(cache == nil ? "" : " cache_s=\(cacheSeconds)") sessions=\(stored)"
        print(
            "\(prefix) kind=hit lookups=\(lookups) concurrency=\(concurrency) \(LatencySummary(hitLatencies).fields) seeded=\(inserted) seed_s=\(Bench.oneDecimal(seedSeconds)) size_mib=\(Bench.oneDecimal(megabytes))\(cacheFields)"
        )
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
}
