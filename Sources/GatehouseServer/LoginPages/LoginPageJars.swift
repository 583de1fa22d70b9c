import Foundation
import GatehouseCore

/// Page logins in flight, keyed by the login id (the transaction's `state`), each with its provider cookie jars.
///
/// The state lives in the session store as a ``PendingRecord`` of purpose `.pageLogin` (key = hash of the id,
/// so the id in the URLs is not a store key), sealed like a credential, with the login transaction's
/// lifetime and swept with the other pending records. Any instance sharing the store continues a login:
/// no sticky routing. The login ends by consuming the record (single use, as a redirect login's transaction).
///
/// Two bounds keep one client from locking everybody out of the page-login kinds: logins in flight, and
/// logins in flight per client address. They are counted per instance (the logins this instance started):
/// behind N instances a client may have up to N × ``perClient`` logins in flight. At a bound, the logins the
/// instance counts are checked against the store first, so one finished on another instance frees its slot.
actor LoginPageJars {
    /// What the store keeps of a page login (sealed). The origins it may visit are the provider's.
    struct Entry: Sendable, Codable, Equatable {
        var transaction: LoginTransaction
        /// The address of the client that started the login.
        var client: String
        /// origin → cookie name → value. Never sent to the browser.
        var cookies: [String: [String: String]] = [:]
        var expiresAt: Date
    }

    /// Why a login could not start.
    enum Refusal: Error, Equatable {
        /// This client has ``perClient`` logins in flight.
        case clientBusy
        /// The instance has ``capacity`` logins in flight.
        case full
    }

    /// The store changed the record under every one of ``store(setCookies:origin:id:now:)``'s attempts.
    struct Contended: Error {}

    private struct Started {
        var client: String
        var expiresAt: Date
    }

    private let records: any SessionStore
    private let sealer: CredentialSealer
    /// The logins this instance started and has not seen end (for the bounds only).
    private var started: [String: Started] = [:]
    private var countByClient: [String: Int] = [:]
    private var nextSweep = Date.distantPast
    let capacity: Int
    let perClient: Int
    /// Compare-and-swap attempts of one cookie update before giving up.
    static let attempts = 16

    init(store: any SessionStore, sealer: CredentialSealer, capacity: Int = 10_000, perClient: Int = 20) {
        self.records = store
        self.sealer = sealer
        self.capacity = capacity
        self.perClient = perClient
    }

    private static func key(_ id: String) -> String { RandomToken.hash(id) }

    /// Starts a page login: counts it against the bounds, then stores it sealed.
    func insert(_ entry: Entry, id: String, now: Date) async throws {
        // Expired logins are dropped at most once a second, not on every start.
        if now >= nextSweep {
            for (id, old) in started where old.expiresAt <= now { forget(id) }
            nextSweep = now.addingTimeInterval(1)
        }
        if countByClient[entry.client, default: 0] >= perClient || started.count >= capacity {
            await forgetEnded(client: started.count >= capacity ? nil : entry.client, now: now)
        }
        // Checked and reserved with no suspension in between: two starts cannot both take the last slot.
        guard countByClient[entry.client, default: 0] < perClient else { throw Refusal.clientBusy }
        guard started.count < capacity else { throw Refusal.full }
        started[id] = Started(client: entry.client, expiresAt: entry.expiresAt)
        countByClient[entry.client, default: 0] += 1
        do {
            try await records.insertPending(
                PendingRecord(
                    keyHash: Self.key(id), purpose: .pageLogin, provider: entry.transaction.provider,
                    payload: try sealer.seal(json: entry), expiresAt: entry.expiresAt))
        } catch {
            forget(id)
            throw error
        }
    }

    /// Drops the counted logins (of `client`, or all) that ended on any instance: no longer in the store.
    private func forgetEnded(client: String?, now: Date) async {
        let candidates = started.filter { client == nil || $0.value.client == client }.map(\.key)
        for id in candidates {
            do {
                if try await records.pendingRecord(keyHash: Self.key(id), purpose: .pageLogin, now: now) == nil { forget(id) }
            } catch {
                // The store failing keeps the logins counted: the bound errs on the strict side.
                return
            }
        }
    }

    private func forget(_ id: String) {
        guard let entry = started.removeValue(forKey: id) else { return }
        let remaining = countByClient[entry.client, default: 1] - 1
        countByClient[entry.client] = remaining > 0 ? remaining : nil
    }

    /// The page login if it is in progress (on any instance).
    func entry(_ id: String, now: Date) async throws -> Entry? {
        try await read(id, now: now)?.entry
    }

    private func read(_ id: String, now: Date) async throws -> (entry: Entry, sealed: Data)? {
        guard let record = try await records.pendingRecord(keyHash: Self.key(id), purpose: .pageLogin, now: now) else { return nil }
        return (try sealer.open(json: Entry.self, from: record.payload), record.payload)
    }

    /// Applies `Set-Cookie` lines of a response from `origin`; returns the jar's cookies for that origin.
    ///
    /// Read-modify-write with compare-and-swap: the lines are applied to the jar as stored now, and written
    /// only if nobody wrote since that read; otherwise read again and apply them again. Two requests of one
    /// login (a page and its sub-resources, maybe on two instances) so keep each other's cookies; only a
    /// cookie both set at once is last-writer-wins. Without `Set-Cookie` nothing is written.
    func store(setCookies: [String], origin: String, id: String, now: Date) async throws -> [String: String] {
        for _ in 0..<Self.attempts {
            guard let (stored, sealed) = try await read(id, now: now) else { return [:] }
            var entry = stored
            var jar = entry.cookies[origin] ?? [:]
            guard !setCookies.isEmpty else { return jar }
            Self.apply(setCookies, to: &jar)
            entry.cookies[origin] = jar
            let replaced = try await records.replacePendingPayload(
                keyHash: Self.key(id), purpose: .pageLogin, expected: sealed, with: try sealer.seal(json: entry), now: now)
            if replaced { return jar }
        }
        throw Contended()
    }

    static func apply(_ setCookies: [String], to jar: inout [String: String]) {
        for line in setCookies {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            guard !name.isEmpty else { continue }
            let expired = parts.dropFirst().contains { $0.lowercased() == "max-age=0" || $0.lowercased().hasPrefix("max-age=-") }
            jar[name] = expired || value.isEmpty ? nil : value
        }
    }

    /// Ends the page login (single use, on any instance).
    func take(_ id: String, now: Date) async throws -> Entry? {
        forget(id)
        guard case .first(let record) = try await records.consumePending(keyHash: Self.key(id), purpose: .pageLogin, now: now) else { return nil }
        return try sealer.open(json: Entry.self, from: record.payload)
    }
}
