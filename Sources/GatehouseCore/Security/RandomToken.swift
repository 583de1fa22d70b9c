import Crypto
import Foundation

/// Random opaque values: session tokens, handoff codes, state, PKCE verifiers.
public enum RandomToken {
    /// `byteCount` random bytes, base64url without padding (32 bytes → 43 characters).
    public static func make(byteCount: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(Data(bytes))
    }

    /// Hex SHA-256 of a secret; what stores keep instead of the secret.
    public static func hash(_ secret: String) -> String {
        // Hand-rolled hex: this runs on every proxied request, and String(format:) per byte showed in profiles.
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Data(secret.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
