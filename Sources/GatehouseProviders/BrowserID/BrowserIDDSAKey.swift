import BigInt
import Crypto
import Foundation

/// A DSA public key of a BrowserID certificate or support document: DS128 (p 1024 / q 160 bits, SHA-1)
/// or DS256 (p 2048 / q 256 bits, SHA-256), told apart by the size of `q`.
///
/// Verification uses BigInt's modular arithmetic, which is not constant-time. That is fine here:
/// verifying handles only public values (the key, the message and the signature are all sent by the
/// client or published by the IdP), so timing reveals nothing secret.
struct BrowserIDDSAKey: Sendable, Equatable {
    let p: BigUInt
    let q: BigUInt
    let g: BigUInt
    let y: BigUInt
    /// `DS128` or `DS256`.
    let algorithm: String

    init(p: BigUInt, q: BigUInt, g: BigUInt, y: BigUInt, role: String) throws(BrowserIDFailure) {
        switch (q.bitWidth, p.bitWidth) {
        case (160, 1024...): algorithm = "DS128"
        case (256, 2048...): algorithm = "DS256"
        default:
            throw .unsupportedAlgorithm(
                "\(role) is a DSA key with a \(p.bitWidth)/\(q.bitWidth)-bit group; only DS128 (1024/160) and DS256 (2048/256) are supported")
        }
        guard p.bitWidth <= 4096 else { throw .unsupportedAlgorithm("\(role) has a DSA modulus above 4096 bits") }
        guard g > 1, g < p, y > 1, y < p else { throw .malformed("\(role) is not a valid DSA key (g or y out of range)") }
        self.p = p
        self.q = q
        self.g = g
        self.y = y
    }

    /// Bytes of r and of s in a signature: 20 (DS128) or 32 (DS256).
    var componentByteCount: Int { algorithm == "DS128" ? 20 : 32 }

    /// The message hash as an integer, whole (BrowserID does not truncate it to q's size).
    func hash(_ message: Data) -> BigUInt {
        algorithm == "DS128" ? BigUInt(Data(Insecure.SHA1.hash(data: message))) : BigUInt(Data(SHA256.hash(data: message)))
    }

    /// FIPS 186 verification of `r ‖ s` (fixed width), requiring 0 < r, s < q.
    func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        let width = componentByteCount
        guard signature.count == 2 * width else { return false }
        let bytes = [UInt8](signature)
        let r = BigUInt(Data(bytes[0..<width]))
        let s = BigUInt(Data(bytes[width...]))
        guard r > 0, r < q, s > 0, s < q, let w = s.inverse(q) else { return false }
        let u1 = (hash(message) * w) % q
        let u2 = (r * w) % q
        let v = ((g.power(u1, modulus: p) * y.power(u2, modulus: p)) % p) % q
        return v == r
    }
}
