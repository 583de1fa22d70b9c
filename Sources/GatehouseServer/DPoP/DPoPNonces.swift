import Crypto
import Foundation
import GatehouseCore

/// Server nonces for DPoP proofs (RFC 9449 §8), stateless so that every instance sharing the sealing keys
/// accepts every other's: the issue time and a MAC of it under a key derived from each sealing key.
/// A nonce is accepted from its issue until ``DPoPPolicy/nonceLifetimeSeconds`` later.
struct DPoPNonces: Sendable {
    /// One MAC key per sealing key; the first issues, all verify (rotation keeps nonces valid).
    private let keys: [SymmetricKey]
    let lifetime: TimeInterval

    init(sealingKeys: [CredentialSealer.Key], lifetime: TimeInterval) {
        keys = sealingKeys.map { key in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: key.bytes), info: Data("gatehouse dpop nonce".utf8), outputByteCount: 32)
        }
        self.lifetime = lifetime
    }

    /// A nonce issued now.
    func issue(now: Date) -> String {
        let stamp = Self.stamp(now)
        return Base64URL.encode(stamp + Self.mac(stamp, keys[0]))
    }

    /// Whether `nonce` was issued by a gateway with these keys, no earlier than the lifetime ago.
    func accepts(_ nonce: String, now: Date) -> Bool {
        guard let bytes = Base64URL.decode(nonce), bytes.count == 8 + 16 else { return false }
        let stamp = bytes.prefix(8)
        let tag = bytes.suffix(16)
        guard keys.contains(where: { ConstantTime.equal(Self.mac(Data(stamp), $0), Data(tag)) }) else { return false }
        let issued = Double(stamp.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let age = now.timeIntervalSince1970 - issued
        return age >= -Double(DPoPPolicy.clockSkewSeconds) && age <= lifetime
    }

    private static func stamp(_ now: Date) -> Data {
        let seconds = UInt64(max(0, now.timeIntervalSince1970.rounded(.down)))
        return Data((0..<8).reversed().map { UInt8(truncatingIfNeeded: seconds >> (UInt64($0) * 8)) })
    }

    private static func mac(_ stamp: Data, _ key: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: stamp, using: key)).prefix(16)
    }
}
