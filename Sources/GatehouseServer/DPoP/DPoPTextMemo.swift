import Synchronization

/// What a check concluded from a piece of a proof's text alone, by that exact text: a client sends the same
/// header bytes (its key) and the same nonce on proof after proof, and checking them again would give the same
/// answer. Only what passed is kept; nothing here stands for a proof's signature, claims or `jti`.
///
/// Bounded: a client can mint keys and ask for nonces at will. Dropping everything when full keeps the cost per
/// entry flat.
final class DPoPTextMemo<Value: Sendable>: Sendable {
    private let entries = Mutex<[String: Value]>([:])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// What was kept for these exact bytes, if anything.
    func value(for text: String) -> Value? {
        entries.withLock { $0[text] }
    }

    /// Keeps what `text` passed with.
    func keep(_ text: String, _ value: Value) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = value
        }
    }
}
