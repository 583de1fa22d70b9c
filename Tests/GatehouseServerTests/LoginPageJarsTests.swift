import Foundation
import GatehouseCore
import GatehouseStore
import Testing

@testable import GatehouseServer

@Suite("Page logins in flight")
struct LoginPageJarsTests {
    static let sealer = try! CredentialSealer(keys: [CredentialSealer.Key(id: "k1", bytes: Data(repeating: 7, count: 32))])

    private func entry(_ client: String, expiresAt: Date) -> LoginPageJars.Entry {
        let transaction = LoginTransaction(
            provider: "legacy", state: RandomToken.make(), codeVerifier: PKCE.makeVerifier(), nonce: "n", callbackURL: "", createdAt: Date())
        return LoginPageJars.Entry(transaction: transaction, client: client, expiresAt: expiresAt)
    }

    private func jars(_ store: any SessionStore, capacity: Int = 10_000, perClient: Int = 20) -> LoginPageJars {
        LoginPageJars(store: store, sealer: Self.sealer, capacity: capacity, perClient: perClient)
    }

    @Test("a client at its limit is refused while others start; expired and finished logins give their slots back")
    func limits() async throws {
        let jars = jars(MemorySessionStore(), capacity: 5, perClient: 2)
        let now = Date()
        let soon = now.addingTimeInterval(60)
        try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a1", now: now)
        try await jars.insert(entry("10.0.0.1", expiresAt: now.addingTimeInterval(5)), id: "a2", now: now)
        await #expect(throws: LoginPageJars.Refusal.clientBusy) { try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a3", now: now) }
        try await jars.insert(entry("10.0.0.2", expiresAt: soon), id: "b1", now: now)
        // a2 expires: the first client may start again.
        try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a3", now: now.addingTimeInterval(10))
        // a1 finishes (taken): another slot.
        #expect(try await jars.take("a1", now: now.addingTimeInterval(10)) != nil)
        try await jars.insert(entry("10.0.0.1", expiresAt: soon), id: "a4", now: now.addingTimeInterval(10))
        // The instance's own bound still holds, whoever asks.
        try await jars.insert(entry("10.0.0.3", expiresAt: soon), id: "c1", now: now.addingTimeInterval(10))
        try await jars.insert(entry("10.0.0.4", expiresAt: soon), id: "d1", now: now.addingTimeInterval(10))
        await #expect(throws: LoginPageJars.Refusal.full) {
            try await jars.insert(entry("10.0.0.5", expiresAt: soon), id: "e1", now: now.addingTimeInterval(10))
        }
    }

    @Test("the per-client bound counts per instance; a login finished on another instance frees its slot there")
    func boundPerInstance() async throws {
        let store = MemorySessionStore()
        let one = jars(store, perClient: 1)
        let two = jars(store, perClient: 1)
        let now = Date()
        let soon = now.addingTimeInterval(60)
        try await one.insert(entry("10.0.0.1", expiresAt: soon), id: "a1", now: now)
        await #expect(throws: LoginPageJars.Refusal.clientBusy) { try await one.insert(entry("10.0.0.1", expiresAt: soon), id: "a2", now: now) }
        #expect(try await two.take("a1", now: now) != nil)
        try await one.insert(entry("10.0.0.1", expiresAt: soon), id: "a2", now: now)
    }

    @Test("a second instance on the same store continues the login: entry and cookies; the end is single use on both")
    func secondInstance() async throws {
        let store = MemorySessionStore()
        let one = jars(store)
        let two = jars(store)
        let now = Date()
        try await one.insert(entry("10.0.0.1", expiresAt: now.addingTimeInterval(60)), id: "L", now: now)
        _ = try await one.store(setCookies: ["site_session=s1; Path=/"], origin: "http://site", id: "L", now: now)
        #expect(try await two.entry("L", now: now)?.cookies["http://site"] == ["site_session": "s1"])
        #expect(
            try await two.store(setCookies: ["other=o; Path=/", "site_session=; Max-Age=0"], origin: "http://site", id: "L", now: now) == [
                "other": "o"
            ])
        #expect(try await one.entry("L", now: now)?.cookies["http://site"] == ["other": "o"])
        #expect(try await two.take("L", now: now)?.cookies["http://site"] == ["other": "o"])
        #expect(try await one.take("L", now: now) == nil)
        #expect(try await one.entry("L", now: now) == nil)
    }

    @Test("concurrent updates on two instances keep both cookies (compare-and-swap, read again on a conflict)")
    func concurrentUpdates() async throws {
        let store = InterleavingStore()
        let one = jars(store)
        let two = jars(store)
        let now = Date()
        try await one.insert(entry("10.0.0.1", expiresAt: now.addingTimeInterval(60)), id: "L", now: now)
        for round in 0..<5 {
            async let first = one.store(setCookies: ["a\(round)=1"], origin: "http://site", id: "L", now: now)
            async let second = two.store(setCookies: ["b\(round)=2"], origin: "http://site", id: "L", now: now)
            _ = try await (first, second)
        }
        let jar = try #require(try await one.entry("L", now: now)?.cookies["http://site"])
        for round in 0..<5 {
            #expect(jar["a\(round)"] == "1")
            #expect(jar["b\(round)"] == "2")
        }
    }

    @Test("sealed at rest, and gone at its expiry: not readable, not writable, swept with the other pending records")
    func sealedAndExpiring() async throws {
        let store = MemorySessionStore()
        let jars = jars(store)
        let now = Date()
        let end = now.addingTimeInterval(60)
        try await jars.insert(entry("10.0.0.1", expiresAt: end), id: "L", now: now)
        _ = try await jars.store(setCookies: ["site_session=secret-value"], origin: "http://site", id: "L", now: now)
        let record = try #require(try await store.pendingRecord(keyHash: RandomToken.hash("L"), purpose: .pageLogin, now: now))
        #expect(record.payload.range(of: Data("secret-value".utf8)) == nil)
        #expect(record.expiresAt == end)
        #expect(try await jars.entry("L", now: end) == nil)
        #expect(try await jars.store(setCookies: ["x=1"], origin: "http://site", id: "L", now: end).isEmpty)
        #expect(try await jars.take("L", now: end) == nil)
        try await store.deleteExpired(now: end.addingTimeInterval(1), idleCutoff: now)
        #expect(try await store.pendingRecord(keyHash: RandomToken.hash("L"), purpose: .pageLogin, now: now) == nil)
    }
}
