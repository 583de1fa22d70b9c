import Crypto
import Foundation
import GatehouseCore

/// Server nonces for DPoP proofs (RFC 9449 §8), stateless: the issue time and a MAC of it under a key derived
/// from each sealing key. A nonce is accepted from its issue until ``DPoPPolicy/nonceLifetimeSeconds`` later.
///
/// Shared (`replay: store`, no ``instance``): every instance sharing the sealing keys accepts every other's.
/// Per instance (`replay: instance`): the nonce also carries the random id the process drew at start-up, under
/// the same MAC, and is accepted only by that process — so a proof, whose `jti` only that process recorded,
/// is refused by every other instance and by the same one after a restart.
struct DPoPNonces: Sendable {
    /// One MAC key per sealing key; the first issues, all verify (rotation keeps nonces valid).
    private let keys: [SymmetricKey]
    let lifetime: TimeInterval
    /// The id of this process (``instanceIDBytes`` random bytes), when nonces are per instance.
    let instance: Data?
    /// The issue time of nonces whose MAC (and instance) passed, by their text: every proof a client sends
    /// carries the nonce it was given, and a nonce is the same text for every client given one in that second.
    /// Only the age is checked again.
    private let verified = DPoPTextMemo<Double>(capacity: 256)

    static let instanceIDBytes = 16
    private static let stampBytes = 8
    private static let tagBytes = 16

    init(sealingKeys: [CredentialSealer.Key], lifetime: TimeInterval, instance: Data? = nil) {
        keys = sealingKeys.map { key in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: key.bytes), info: Data("gatehouse dpop nonce".utf8), outputByteCount: 32)
        }
        self.lifetime = lifetime
        self.instance = instance
    }

    /// A random instance id, drawn once per process.
    static func newInstanceID() -> Data {
        Data(SymmetricKey(size: .init(bitCount: instanceIDBytes * 8)).withUnsafeBytes { Array($0) })
    }

    /// A nonce issued now.
    func issue(now: Date) -> String {
        let body = (instance ?? Data()) + Self.stamp(now)
        return Base64URL.encode(body + Self.mac(body, keys[0]))
    }

    /// Whether `nonce` was issued by a gateway with these keys (and, per instance, by this process), no earlier
    /// than the lifetime ago.
    func accepts(_ nonce: String, now: Date) -> Bool {
        guard nonce.utf8.count <= 128 else { return false }
        let issued: Double
        if let known = verified.value(for: Substring(nonce).utf8) {
            issued = known
        } else {
            guard let authentic = issueTime(nonce) else { return false }
            issued = authentic
            verified.keep(Substring(nonce).utf8, issued)
        }
        let age = now.timeIntervalSince1970 - issued
        return age >= -Double(DPoPPolicy.clockSkewSeconds) && age <= lifetime
    }

    /// When `nonce` was issued, if a gateway with these keys (and, per instance, this process) issued it.
    private func issueTime(_ nonce: String) -> Double? {
        let prefix = instance?.count ?? 0
        guard let bytes = Base64URL.decode(nonce), bytes.count == prefix + Self.stampBytes + Self.tagBytes else { return nil }
        let body = Data(bytes.prefix(prefix + Self.stampBytes))
        let tag = Data(bytes.suffix(Self.tagBytes))
        guard keys.contains(where: { ConstantTime.equal(Self.mac(body, $0), tag) }) else { return nil }
        if let instance, !ConstantTime.equal(Data(body.prefix(prefix)), instance) { return nil }
        return Double(body.suffix(Self.stampBytes).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    private static func stamp(_ now: Date) -> Data {
        let seconds = UInt64(max(0, now.timeIntervalSince1970.rounded(.down)))
        return Data((0..<8).reversed().map { UInt8(truncatingIfNeeded: seconds >> (UInt64($0) * 8)) })
    }

    private static func mac(_ body: Data, _ key: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: body, using: key)).prefix(tagBytes)
    }
}
