import Foundation
import Synchronization

/// The checked JOSE headers of recent proofs, by their base64url bytes: a client signs every proof with the
/// same key, so every proof of a bound session carries the same header bytes, and decoding them, checking
/// the key and hashing its thumbprint would give the same answer each time. Only a header that passed
/// every header check is kept — a result of its bytes alone; the signature, claims and `jti` of each proof
/// are still checked.
///
/// Looked up in the proof's own bytes: a hash of them finds the entry, a comparison of every byte confirms it
/// (no `String` is made of the header on each request). Bounded: a client can mint keys at will; dropping
/// everything when full keeps the cost per entry flat.
final class DPoPHeaderCache: Sendable {
    /// What the checks read of a header that passed them.
    struct Checked: Sendable {
        let alg: String
        let jwk: [String: String]
        let thumbprint: String
        /// An ES256 header's key, parsed once: verifying a proof is then one signature check on the caller's thread.
        let es256: DPoPES256Key?
    }

    private struct Entry: Sendable {
        let bytes: [UInt8]
        let checked: Checked
    }

    /// By the hash of the header's bytes; two headers of one hash (the seed is the process's own, so only by chance)
    /// take turns in one entry.
    private let entries = Mutex<[Int: Entry]>([:])
    private let capacity: Int
    private let hash: @Sendable (UnsafeBufferPointer<UInt8>) -> Int

    /// `hash`: how entries are found (a test gives every header one hash, to see that only the same bytes match).
    init(capacity: Int = 4096, hash: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Int = DPoPHeaderCache.seededHash) {
        self.capacity = capacity
        self.hash = hash
    }

    /// The header's checked contents, when these exact bytes passed the checks before.
    func checked(_ header: Substring.UTF8View) -> Checked? {
        Self.withBytes(header) { bytes in
            let key = hash(bytes)
            guard let entry = entries.withLock({ $0[key] }),
                entry.bytes.count == bytes.count,
                entry.bytes.isEmpty || entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
            else { return nil }
            return entry.checked
        }
    }

    /// Keeps a header that passed the checks.
    func keep(_ header: Substring.UTF8View, _ checked: Checked) {
        Self.withBytes(header) { bytes in
            let key = hash(bytes)
            let entry = Entry(bytes: Array(bytes), checked: checked)
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

    /// The header's bytes where they lie (a native string's are contiguous), else a copy.
    private static func withBytes<R>(_ header: Substring.UTF8View, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        header.withContiguousStorageIfAvailable(body) ?? Array(header).withUnsafeBufferPointer(body)
    }
}
