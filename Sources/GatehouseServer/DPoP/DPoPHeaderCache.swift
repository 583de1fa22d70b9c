/// The checked JOSE headers of recent proofs, by their base64url bytes (a ``DPoPTextMemo``): a client signs every
/// proof with the same key, so every proof of a bound session carries the same header bytes, and decoding them,
/// checking the key and hashing its thumbprint would give the same answer each time. Only a header that passed
/// every header check is kept — a result of its bytes alone; the signature, claims and `jti` of each proof
/// are still checked.
final class DPoPHeaderCache: Sendable {
    /// What the checks read of a header that passed them.
    struct Checked: Sendable {
        let alg: String
        let jwk: [String: String]
        let thumbprint: String
        /// An ES256 header's key, parsed once: verifying a proof is then one signature check on the caller's thread.
        let es256: DPoPES256Key?
    }

    private let headers: DPoPTextMemo<Checked>

    /// `hash`: how entries are found (``DPoPTextMemo/init(capacity:hash:)``).
    init(
        capacity: Int = 4096, hash: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Int = DPoPTextMemo<Checked>.seededHash
    ) {
        headers = DPoPTextMemo(capacity: capacity, hash: hash)
    }

    /// The header's checked contents, when these exact bytes passed the checks before.
    func checked(_ header: Substring.UTF8View) -> Checked? {
        headers.value(for: header)
    }

    /// Keeps a header that passed the checks.
    func keep(_ header: Substring.UTF8View, _ checked: Checked) {
        headers.keep(header, checked)
    }
}
