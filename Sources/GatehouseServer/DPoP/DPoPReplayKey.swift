import Crypto
import GatehouseCore

/// What `replay: instance` keeps of an accepted proof: 128 bits of the SHA-256 of its key's thumbprint and its
/// `jti`. A fixed 16 bytes in place of a string as long as the `jti` (up to 256 bytes, one allocation each):
/// a gateway taking 10,000 proofs a second keeps more than a million records (two windows of the age check), and
/// their memory and the set's look-ups then grow with the key's size.
///
/// The same proof always gives the same key, so a replay is always found. Two different proofs giving one key
/// (a 128-bit collision of SHA-256) would only refuse the second as a replay; nothing is ever accepted by it.
struct DPoPReplayKey: Hashable, Sendable {
    private let high: UInt64
    private let low: UInt64

    /// The key of a proof: its key's thumbprint, length-prefixed so that no thumbprint and `jti` run into another
    /// pair's, then its `jti`.
    init(thumbprint: String, jti: String) {
        var hasher = SHA256()
        var length = UInt64(thumbprint.utf8.count).bigEndian
        withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
        hasher.update(utf8: thumbprint)
        hasher.update(utf8: jti)
        (high, low) = hasher.finalize().withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }
}
