import Crypto
import Foundation

/// What the once log keeps of a ``SessionStore/recordOnce(_:until:now:)`` key: the first 16 bytes of its
/// SHA-256. A fixed 16-byte value instead of the ~90-character key keeps log rows and the in-memory set small;
/// 128 bits make an accidental collision (which would refuse one proof as a replay) negligible, and a
/// deliberate one needs a SHA-256 second preimage.
struct SQLiteOnceDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// The digest of a key.
    init(key: String) {
        var key = key
        let hash = key.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        (high, low) = hash.withUnsafeBytes(Self.words)
    }

    /// The digest stored in a log row; nil when `blob` is not 16 bytes.
    init?(blob: Data) {
        guard blob.count == 16 else { return nil }
        (high, low) = blob.withUnsafeBytes(Self.words)
    }

    /// The 16 bytes a log row stores (big-endian: the hash's own first bytes).
    var blob: Data {
        var bytes = Data(count: 16)
        bytes.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return bytes
    }

    /// The first 16 bytes as two big-endian words.
    private static func words(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        (
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        )
    }
}
