import Foundation
import GatehouseCore

/// Page logins in flight, keyed by the login transaction's id, each with its provider cookie jar.
///
/// Kept in memory (an actor) rather than sealed in the transaction's pending record: the jar changes on
/// every proxied response, and the store only offers insert and single-use consume. The cost is that a page
/// login must stay on the gateway instance that started it (sticky routing); redirect logins are unaffected.
actor LoginPageJars {
    struct Entry: Sendable {
        var transaction: LoginTransaction
        /// origin → cookie name → value. Never sent to the browser.
        var cookies: [String: [String: String]] = [:]
        var expiresAt: Date
    }

    private var entries: [String: Entry] = [:]
    /// Upper bound of logins in flight, so the map cannot grow without limit.
    private let capacity = 10_000

    func insert(_ entry: Entry, id: String, now: Date) -> Bool {
        entries = entries.filter { $0.value.expiresAt > now }
        guard entries.count < capacity else { return false }
        entries[id] = entry
        return true
    }

    func entry(_ id: String, now: Date) -> Entry? {
        guard let entry = entries[id] else { return nil }
        guard entry.expiresAt > now else {
            entries[id] = nil
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
        guard let entry = entries.removeValue(forKey: id), entry.expiresAt > now else { return nil }
        return entry
    }
}
