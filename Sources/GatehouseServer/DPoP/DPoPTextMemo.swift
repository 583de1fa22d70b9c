import Foundation
import Synchronization

/// What a check concluded from a piece of a proof's text alone, by those exact bytes: a client sends the same
/// header bytes (its key) and the same nonce on proof after proof, and checking them again would give the same
/// answer. Only what passed is kept; nothing here stands for a proof's signature, claims or `jti`.
///
/// Looked up in the text's own bytes: a hash of them finds the entry, a comparison of every byte confirms it (no
/// `String` is made of a piece of a proof on each request). Bounded: a client can mint keys and ask for nonces at
/// will. Dropping everything when full keeps the cost per entry flat.
final class DPoPTextMemo<Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        let bytes: [UInt8]
        let value: Value
    }

    /// By the hash of the text's bytes; two texts of one hash (the seed is the process's own, so only by chance)
    /// take turns in one entry.
    private let entries = Mutex<[Int: Entry]>([:])
    private let capacity: Int
    private let hash: @Sendable (UnsafeBufferPointer<UInt8>) -> Int

    /// `hash`: how entries are found (a test gives every text one hash, to see that only the same bytes match).
    init(capacity: Int, hash: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Int = DPoPTextMemo.seededHash) {
        self.capacity = capacity
        self.hash = hash
    }

    /// What was kept for these exact bytes, if anything.
    func value(for text: Substring.UTF8View) -> Value? {
        Self.withBytes(text) { bytes in
            let key = hash(bytes)
            guard let entry = entries.withLock({ $0[key] }), entry.bytes.count == bytes.count,
                entry.bytes.isEmpty || entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
            else { return nil }
            return entry.value
        }
    }

    /// Keeps what `text` passed with.
    func keep(_ text: Substring.UTF8View, _ value: Value) {
        Self.withBytes(text) { bytes in
            let key = hash(bytes)
            let entry = Entry(bytes: Array(bytes), value: value)
            entries.withLock { entries in
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                entries[key] = entry
            }
        }
    }

    /// The standard library's `Hasher` over the bytes (keyed by the process's random seed).
    static func seededHash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return hasher.finalize()
    }

    /// The text's bytes where they lie (a native string's are contiguous), else a copy.
    private static func withBytes<R>(_ text: Substring.UTF8View, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        text.withContiguousStorageIfAvailable(body) ?? Array(text).withUnsafeBufferPointer(body)
    }
}
