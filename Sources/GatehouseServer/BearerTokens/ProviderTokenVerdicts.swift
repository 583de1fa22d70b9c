import Foundation
import GatehouseCore
import Synchronization

/// The verdicts on provider-issued bearer tokens, by the token's SHA-256: a busy machine client costs one
/// verification (or introspection) per token, not one per request. Bounded; read on the event loop.
final class ProviderTokenVerdicts: Sendable {
    /// The longest a refusal is remembered: a token refused by mistake (an introspection endpoint that lagged
    /// behind its token endpoint) works again soon.
    static let refusalLifetime: TimeInterval = 10
    /// The most verdicts kept.
    let capacity: Int

    private struct Entry {
        let verdict: Result<ActiveSession, GatehouseError>
        let until: Date
        /// The providers' ``ProviderSet/generation`` it was made under: a reload (SIGHUP) voids it.
        let generation: UInt64
    }

    private let entries = Mutex<[String: Entry]>([:])

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// The verdict on the token whose hash is `tokenHash`, while it holds and the providers are those it was
    /// made under (`generation`).
    func verdict(tokenHash: String, now: Date, generation: UInt64) -> Result<ActiveSession, GatehouseError>? {
        entry(tokenHash: tokenHash, now: now, generation: generation)?.verdict
    }

    /// The same, with the moment it stops holding.
    func entry(tokenHash: String, now: Date, generation: UInt64) -> (verdict: Result<ActiveSession, GatehouseError>, until: Date)? {
        entries.withLock { entries in
            guard let entry = entries[tokenHash] else { return nil }
            guard now < entry.until, entry.generation == generation else {
                entries.removeValue(forKey: tokenHash)
                return nil
            }
            return (entry.verdict, entry.until)
        }
    }

    /// Keeps a verdict until `until` (a refusal at most ``refusalLifetime``).
    func keep(_ verdict: Result<ActiveSession, GatehouseError>, tokenHash: String, until deadline: Date, now: Date, generation: UInt64) {
        let until: Date
        switch verdict {
        case .success: until = deadline
        case .failure: until = min(deadline, now.addingTimeInterval(Self.refusalLifetime))
        }
        guard now < until else { return }
        entries.withLock { entries in
            if entries.count >= capacity, entries[tokenHash] == nil {
                // Stale ones first; if every one is live, a quarter goes (any quarter: they are all re-verifiable).
                entries = entries.filter { now < $0.value.until }
                if entries.count >= capacity {
                    for key in entries.keys.prefix(max(1, capacity / 4)) { entries.removeValue(forKey: key) }
                }
            }
            entries[tokenHash] = Entry(verdict: verdict, until: until, generation: generation)
        }
    }

    /// How many verdicts are kept (for tests).
    var count: Int { entries.withLock { $0.count } }
}
