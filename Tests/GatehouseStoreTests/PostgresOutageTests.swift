import Foundation
import GatehouseCore
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import GatehouseStore

/// The SPEC's fault rule on a real PostgreSQL: once the store is stopped or paused, every call fails with
/// ``StoreUnavailableError`` within 1 s (calls in flight at the fault included), and the same store object
/// works again once PostgreSQL is back. Each test has a server of its own (it stops or pauses it), and the
/// stores run with their own deadlines, not the patient ones of the behaviour tests.
@Suite(.serialized, .enabled(if: PostgresTestServer.isEnabled, "PostgreSQL server binaries are not installed"))
struct PostgresOutageTests {
    /// The SPEC's bound, from the fault (or the call's start, if later) to the error.
    static let bound: Duration = .seconds(1)

    @Test func aFastShutdownFailsCallsInFlightAndLaterOnesWithinOneSecondAndTheStoreRecovers() async throws {
        let server = PostgresTestServer()
        let url = try await server.makeDatabase()
        try await Self.withStore(url: url) { store in
            try await Self.withStore(url: url) { idle in
                try await store.migrate()
                try await store.insertSession(Fixtures.session(id: "s1"))
                // Another instance, idle at the stop: its first call finds the server refusing connections.
                try await idle.ping()
                // A statement in flight at the stop: the server ends it, and the call must not wait its deadline.
                let inFlight = Task { () -> ContinuousClock.Instant in
                    await #expect(throws: StoreUnavailableError.self) {
                        try await store.guarded(.background, limit: .seconds(60)) { connection in
                            _ = try await connection.query("SELECT pg_sleep(30)", logger: store.logger).collect()
                        }
                    }
                    return .now
                }
                let traffic = Traffic(store: store)
                try await traffic.warmUp()
                let fault = ContinuousClock.now
                try await server.stop()
                let stopped = ContinuousClock.now
                try await Task.sleep(for: .milliseconds(1500))
                let calls = await traffic.finish()
                #expect(await inFlight.value - fault < Self.bound, "the statement in flight waited for its deadline")
                Self.expectFailuresWithinBound(calls, fault: fault, complete: stopped)
                let first = ContinuousClock.now
                await #expect(throws: StoreUnavailableError.self) { try await idle.session(tokenHash: "hash-of-s1") }
                #expect(ContinuousClock.now - first < Self.bound, "the idle instance's first call waited for a deadline")
                // The breaker is open: a call fails at once.
                let started = ContinuousClock.now
                await #expect(throws: StoreUnavailableError.self) { try await store.session(tokenHash: "hash-of-s1") }
                #expect(ContinuousClock.now - started < .milliseconds(200))

                try await server.restart()
                try await Self.expectRecovery(store)
                try await Self.expectRecovery(idle)
            }
        }
    }

    @Test func aPausedServerFailsCallsWithinOneSecondAndTheStoreAndItsChangeFeedRecover() async throws {
        let server = PostgresTestServer()
        let url = try await server.makeDatabase()
        try await Self.withStore(url: url) { store in
            try await store.migrate()
            try await store.insertSession(Fixtures.session(id: "s1"))
            let feed = FeedFollower(store: store)
            defer { feed.stop() }
            try await feed.waitUntilListening(count: 1)
            // Background work in flight at the pause: it has a long deadline, but fails once the breaker opens.
            let inFlight = Task { () -> ContinuousClock.Instant in
                await #expect(throws: StoreUnavailableError.self) {
                    try await store.guarded(.background, limit: .seconds(60)) { connection in
                        _ = try await connection.query("SELECT pg_sleep(30)", logger: store.logger).collect()
                    }
                }
                return .now
            }
            let traffic = Traffic(store: store)
            try await traffic.warmUp()
            let fault = ContinuousClock.now
            try await server.pause()
            let paused = ContinuousClock.now
            do {
                try await Task.sleep(for: .milliseconds(2500))
                let calls = await traffic.finish()
                #expect(await inFlight.value - fault < Self.bound, "background work in flight waited for its deadline")
                Self.expectFailuresWithinBound(calls, fault: fault, complete: paused)
                // The feed's connection looks open but notifications would be lost: it must have ended.
                #expect(feed.endings >= 1, "the change feed still trusts a connection to a paused server")
            } catch {
                try await server.resume()
                throw error
            }
            try await server.resume()
            try await Self.expectRecovery(store)
            // The feed follows again, and hears a change made through another store object.
            try await feed.waitUntilListening(count: 2)
            try await StoreFactory.withPostgresStore(url: url) { other in
                try await other.deleteSession(id: "s1")
            }
            try await feed.waitForChange(id: "s1")
        }
    }

    @Test func aConnectionTheServerClosesOpensTheBreakerAtOnce() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await Self.withStore(url: url) { store in
            try await store.migrate()
            let database = try #require(url.components(separatedBy: "/").last?.components(separatedBy: "?").first)
            let inFlight = Task {
                try await store.guarded(.background, limit: .seconds(60)) { connection in
                    _ = try await connection.query("SELECT pg_sleep(30)", logger: store.logger).collect()
                }
            }
            // Another client ends the store's session (as an operator's pg_terminate_backend does).
            try await StoreFactory.withPostgresStore(url: url) { admin in
                let deadline = ContinuousClock.now + .seconds(20)
                while true {
                    let terminated = try await admin.guarded { connection in
                        try await connection.query(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(database) AND query LIKE 'SELECT pg_sleep%'",
                            logger: admin.logger
                        ).collect().count
                    }
                    if terminated > 0 { break }
                    try #require(ContinuousClock.now < deadline, "the statement never started")
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            await #expect(throws: StoreUnavailableError.self) { try await inFlight.value }
            #expect(store.breaker.isOpen, "one closed connection must open the breaker")
            // The server is up: the probe closes the breaker again.
            try await Self.expectRecovery(store, tokenHash: nil)
        }
    }

    @Test func aClosedChannelSeenOnceOpensTheBreakerAtOnce() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await Self.withStore(url: url) { store in
            try await store.ping()
            #expect(!store.breaker.isOpen)
            await #expect(throws: StoreUnavailableError.self) {
                try await store.guarded { _ in throw ChannelError.ioOnClosedChannel }
            }
            #expect(store.breaker.isOpen)
            try await Self.expectRecovery(store, tokenHash: nil)
        }
    }

    @Test func aRefusedConnectionOpensTheBreakerAtOnce() async throws {
        // Port 1 on loopback: nothing listens, the connection is refused.
        try await Self.withStore(url: "postgres://postgres@127.0.0.1:1/none?sslmode=disable") { store in
            let started = ContinuousClock.now
            await #expect(throws: StoreUnavailableError.self) { try await store.session(tokenHash: "h") }
            #expect(ContinuousClock.now - started < Self.bound)
            #expect(store.breaker.isOpen)
            let again = ContinuousClock.now
            await #expect(throws: StoreUnavailableError.self) { try await store.ping() }
            #expect(ContinuousClock.now - again < .milliseconds(200))
        }
    }

    // MARK: Helpers

    /// A store with its own default deadlines, its pool running for the duration.
    static func withStore<T>(url: String, _ body: (PostgresSessionStore) async throws -> T) async throws -> T {
        let store = try PostgresSessionStore(url: url, poolSize: 4, logger: Logger(label: "test.postgres.outage"))
        let pool = Task { try? await store.run() }
        defer { pool.cancel() }
        return try await body(store)
    }

    /// Every call that failed did so with ``StoreUnavailableError`` within ``bound`` of the later of its
    /// start and the fault (which began at `fault` and was complete at `complete`); every call begun after
    /// `complete` failed.
    static func expectFailuresWithinBound(_ calls: [Traffic.Call], fault: ContinuousClock.Instant, complete: ContinuousClock.Instant) {
        #expect(calls.contains { $0.started > complete }, "no call after the fault")
        for call in calls where call.ended > fault {
            if call.started > complete { #expect(!call.succeeded, "a call after the fault succeeded") }
            guard !call.succeeded else { continue }
            #expect(call.unavailable, "a call failed with another error than StoreUnavailableError")
            let waited = call.ended - max(call.started, fault)
            #expect(waited < bound, "a call waited \(waited) for its error")
        }
    }

    /// Calls succeed again within 30 s, on the same store object.
    static func expectRecovery(_ store: PostgresSessionStore, tokenHash: String? = "hash-of-s1") async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                if let tokenHash { _ = try await store.session(tokenHash: tokenHash) }
                try await store.ping()
                return
            } catch is StoreUnavailableError {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the store did not recover within 30 s")
                    return
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Lookups in a loop from several tasks, each call timed.
    final class Traffic: Sendable {
        struct Call: Sendable {
            var started: ContinuousClock.Instant
            var ended: ContinuousClock.Instant
            var succeeded: Bool
            var unavailable: Bool
        }

        private let calls = Mutex<[Call]>([])
        private let running = Atomic<Bool>(true)
        private let tasks = Mutex<[Task<Void, Never>]>([])

        init(store: PostgresSessionStore, concurrency: Int = 6) {
            let tasks = (0..<concurrency).map { _ in Task { [self] in await loop(store) } }
            self.tasks.withLock { $0 = tasks }
        }

        private func loop(_ store: PostgresSessionStore) async {
            while running.load(ordering: .relaxed) {
                let started = ContinuousClock.now
                var call = Call(started: started, ended: started, succeeded: false, unavailable: false)
                do {
                    _ = try await store.session(tokenHash: "hash-of-s1")
                    call.succeeded = true
                } catch {
                    call.unavailable = error is StoreUnavailableError
                }
                call.ended = .now
                calls.withLock { [call] in $0.append(call) }
                // Not a busy loop once calls fail at once.
                if !call.succeeded { try? await Task.sleep(for: .milliseconds(10)) }
            }
        }

        /// Waits until calls succeed.
        func warmUp() async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while calls.withLock({ $0.filter(\.succeeded).count }) < 20 {
                guard ContinuousClock.now < deadline else { throw CancellationError() }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        /// Stops the loops (a call still waiting ends within the bound, or the test fails) and returns every call.
        func finish() async -> [Call] {
            running.store(false, ordering: .relaxed)
            for task in tasks.withLock({ $0 }) { await task.value }
            return calls.withLock { $0 }
        }
    }

    /// Follows the store's change feed as the gateway's synchronizer does: again after each ending.
    final class FeedFollower: Sendable {
        private let state = Mutex<(listening: Int, endings: Int, changes: [String])>((0, 0, []))
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(store: PostgresSessionStore) {
            task.withLock {
                $0 = Task { [self] in
                    while !Task.isCancelled {
                        do {
                            try await store.followSessionNotifications(
                                onListening: { self.state.withLock { $0.listening += 1 } },
                                onChange: { id in self.state.withLock { $0.changes.append(id) } })
                        } catch {}
                        if Task.isCancelled { return }
                        self.state.withLock { $0.endings += 1 }
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                }
            }
        }

        var endings: Int { state.withLock { $0.endings } }

        func waitUntilListening(count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while state.withLock({ $0.listening }) < count {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the change feed did not listen (again) within 30 s")
                    return
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func waitForChange(id: String) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !state.withLock({ $0.changes.contains(id) }) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the change feed did not announce \(id)")
                    return
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func stop() {
            task.withLock { $0?.cancel() }
        }
    }
}
