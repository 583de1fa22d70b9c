import Foundation
import GatehouseCore

/// Page logins in flight, keyed by the login transaction's id, each with its provider cookie jar.
///
/// Kept in memory (an actor) rather than sealed in the transaction's pending record: the jar changes on
/// every proxied response, and the store only offers insert and single-use consume. The cost is that a page
/// login must stay on the gateway instance that started it (sticky routing); redirect logins are unaffected.
///
/// Two bounds keep the map from growing without limit and keep one client from locking everybody out of
/// the page-login kinds: logins in flight on the instance, and logins in flight per client address.
actor LoginPageJars {
    struct Entry: Sendable {
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

    private var entries: [String: Entry] = [:]
    private var countByClient: [String: Int] = [:]
    private var nextSweep = Date.distantPast
    let capacity: Int
    let perClient: Int

    init(capacity: Int = 10_000, perClient: Int = 20) {
        self.capacity = capacity
        self.perClient = perClient
    }

    func insert(_ entry: Entry, id: String, now: Date) throws(Refusal) {
        // Expired logins are dropped at most once a second, not on every start.
        if now >= nextSweep || entries.count >= capacity || countByClient[entry.client, default: 0] >= perClient {
            for (id, old) in entries where old.expiresAt <= now { remove(id) }
            nextSweep = now.addingTimeInterval(1)
        }
        guard countByClient[entry.client, default: 0] < perClient else { throw .clientBusy }
        guard entries.count < capacity else { throw .full }
        entries[id] = entry
        countByClient[entry.client, default: 0] += 1
    }

    private func remove(_ id: String) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        let remaining = countByClient[entry.client, default: 1] - 1
        countByClient[entry.client] = remaining > 0 ? remaining : nil
    }

    func entry(_ id: String, now: Date) -> Entry? {
        guard let entry = entries[id] else { return nil }
        guard entry.expiresAt > now else {
            remove(id)
            return nil
        }
        return entry
    }

    /// Applies `Set-Cookie` lines of a response from `origin`; returns the jar's cookies for that origin.
    func store(setCookies: [String], origin: String, id: String) -> [String: String] {
        guard var entry = entries[id] else { return [:] }
        var jar = entry.cookies[origin] ?? [:]
        for line in setCookies {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
            guard !name.isEmpty else { continue }
            let expired = parts.dropFirst().contains { $0.lowercased() == "max-age=0" || $0.lowercased().hasPrefix("max-age=-") }
            jar[name] = expired || value.isEmpty ? nil : value
        }
        entry.cookies[origin] = jar
        entries[id] = entry
        return jar
    }

    /// Ends the page login (single use).
    func take(_ id: String, now: Date) -> Entry? {
        guard let entry = entries[id] else { return nil }
        remove(id)
        return entry.expiresAt > now ? entry : nil
    }
}
