import Foundation
import GatehouseCore
import GatehouseStore
import Logging
import PostgresNIO
import Testing

/// What only the shared PostgreSQL store must do: migrate safely from several instances at once, be
/// shared by two store objects (two gateway instances), and report an unreachable server as such.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "PostgreSQL server binaries are not installed"))
struct PostgresSessionStoreTests {
    @Test func concurrentMigrationsFromSeveralInstancesDoNotRace() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await StoreFactory.withPostgresStore(url: url) { a in
            try await StoreFactory.withPostgresStore(url: url) { b in
                async let first: Void = a.migrate()
                async let second: Void = b.migrate()
                async let third: Void = a.migrate()
                _ = try await (first, second, third)
                try await a.insertSession(Fixtures.session(id: "s1"))
                #expect(try await b.session(id: "s1") != nil)
            }
        }
    }

    @Test func anEndOrRefreshAtOneInstanceReachesAnotherInstancesCacheWithinOneSecond() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await StoreFactory.withPostgresStore(url: url) { a in
            try await a.migrate()
            try await StoreFactory.withPostgresStore(url: url) { b in
                let cache = CachingSessionStore(base: b, timeToLive: 600)
                let feed = Task {
                    try await b.followSessionNotifications(onListening: { cache.feedStarted() }, onChange: { cache.sessionChanged(id: $0) })
                }
                defer { feed.cancel() }
                let listening = ContinuousClock.now
                while !cache.isSynchronized {
                    #expect(ContinuousClock.now - listening < .seconds(10), "the feed never started listening")
                    try await Task.sleep(for: .milliseconds(10))
                }

                for id in ["ended", "refreshed"] {
                    try await a.insertSession(Fixtures.session(id: id))
                    #expect(try await cache.session(tokenHash: "hash-of-\(id)")?.credentialVersion == 1)
                }
                #expect(cache.cachedCount == 2)

                let changed = ContinuousClock.now
                try await a.deleteSession(id: "ended")
                #expect(try await a.updateCredential(sessionID: "refreshed", sealedCredential: Data([7]), expectedVersion: 1))
                while true {
                    let ended = try await cache.session(tokenHash: "hash-of-ended")
                    let refreshed = try await cache.session(tokenHash: "hash-of-refreshed")
                    if ended == nil && refreshed?.credentialVersion == 2 { break }
                    guard ContinuousClock.now - changed < .seconds(1) else {
                        Issue.record("instance B still serves the old session after 1 s")
                        break
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
                // A failed compare-and-set changes nothing and announces nothing harmful.
                #expect(try await !a.updateCredential(sessionID: "refreshed", sealedCredential: Data([8]), expectedVersion: 1))
            }
        }
    }

    @Test func tlsModesDoWhatTheySay() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        let base = try #require(url.components(separatedBy: "?").first)
        for (mode, encrypted) in [("disable", false), ("prefer", true), ("require", true)] {
            let settings = try PostgresConnectionSettings(url: "\(base)?sslmode=\(mode)", poolSize: 1)
            let client = PostgresClient(configuration: settings.configuration)
            let pool = Task { await client.run() }
            defer { pool.cancel() }
            var seen: [Bool] = []
            for try await ssl in try await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").decode(Bool.self) {
                seen.append(ssl)
            }
            #expect(seen == [encrypted], "sslmode=\(mode)")
        }
        // verify-full checks the certificate: the test server's is self-signed, so the store cannot connect.
        _ = try await StoreFactory.withPostgresStore(url: "\(base)?sslmode=verify-full", operationTimeout: .seconds(5)) { store in
            await #expect(throws: StoreUnavailableError.self) { try await store.ping() }
        }
    }

    @Test func aPendingRecordIsConsumedOnceAcrossInstances() async throws {
        let url = try await PostgresTestServer.shared.makeDatabase()
        try await StoreFactory.withPostgresStore(url: url) { a in
            try await a.migrate()
            try await StoreFactory.withPostgresStore(url: url) { b in
                let now = Date()
                try await a.insertPending(
                    PendingRecord(keyHash: "k", purpose: .handoffCode, provider: "p", payload: Data("x".utf8), expiresAt: now.addingTimeInterval(60)))
                let results = try await withThrowingTaskGroup(of: Consumption.self) { group in
                    for index in 0..<20 {
                        let store = index.isMultiple(of: 2) ? a : b
                        group.addTask { try await store.consumePending(keyHash: "k", purpose: .handoffCode, now: now) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let firsts = results.filter { if case .first = $0 { true } else { false } }
                #expect(firsts.count == 1)
            }
        }
    }

    @Test func anUnreachableServerThrowsStoreUnavailable() async throws {
        // Port 1 on loopback: nothing listens, the connection is refused.
        // The store's own default timeouts, not the patient ones of the other tests.
        let store = try PostgresSessionStore(
            url: "postgres://postgres@127.0.0.1:1/none?sslmode=disable", poolSize: 2, logger: Logger(label: "test.postgres"))
        let pool = Task { try? await store.run() }
        defer { pool.cancel() }
        let started = ContinuousClock.now
        await #expect(throws: StoreUnavailableError.self) { try await store.ping() }
        await #expect(throws: StoreUnavailableError.self) { try await store.session(tokenHash: "h") }
        // A generous bound: this proves "no hang", not speed (ping 2 s, operations 5 s, on a loaded machine).
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func malformedURLsAreRefusedWithoutEchoingThePassword() {
        #expect(throws: PostgresURLError.self) { try PostgresConnectionSettings(url: "postgres:///nohost", poolSize: 1) }
        do {
            _ = try PostgresConnectionSettings(url: "postgres://u:secret@h/db?sslmode=bogus", poolSize: 1)
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("secret"))
        }
        let settings = try? PostgresConnectionSettings(url: "postgres://us%40er:p%2Fw@db.example:6543/gh?sslmode=require", poolSize: 7)
        #expect(settings?.configuration.username == "us@er")
        #expect(settings?.configuration.password == "p/w")
        #expect(settings?.configuration.database == "gh")
        #expect(settings?.configuration.port == 6543)
        #expect(settings?.configuration.options.maximumConnections == 7)
    }
}
