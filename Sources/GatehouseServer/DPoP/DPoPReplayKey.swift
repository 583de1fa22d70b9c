/// What `replay: instance` keeps of an accepted proof: 128 bits hashed from its key's thumbprint and its `jti`. A
/// fixed 16 bytes in place of a string as long as the `jti` (up to 256 bytes, one allocation each): a gateway taking
/// 10,000 proofs a second keeps more than a million records (two windows of the age check), and their memory and
/// the set's look-ups then grow with the key's size.
///
/// The two halves are the standard library's `Hasher` (SipHash, keyed by a seed drawn at random when the process
/// starts) over the same bytes under two different prefixes: the record lives in this process only, so its key
/// need not be the same in another, and a keyed hash is several times cheaper than a SHA-256 context per proof.
/// Nobody outside the process knows the seed, so a client cannot choose `jti`s that collide; two proofs that did
/// would only have the second refused as a replay — nothing is ever accepted by a collision.
struct DPoPReplayKey: Hashable, Sendable {
    private let high: UInt64
    private let low: UInt64

    /// The key of a proof: its key's thumbprint, length-prefixed so that no thumbprint and `jti` run into another
    /// pair's, then its `jti`, as UTF-8 bytes.
    init(thumbprint: String, jti: String) {
        func half(_ domain: UInt8) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(domain)
            hasher.combine(thumbprint.utf8.count)
            Self.combine(thumbprint, into: &hasher)
            Self.combine(jti, into: &hasher)
            return UInt64(truncatingIfNeeded: hasher.finalize())
        }
        high = half(1)
        low = half(2)
    }

    /// Feeds the text's UTF-8 bytes themselves (a `String`'s own hashing is by Unicode canonical equivalence).
    private static func combine(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
