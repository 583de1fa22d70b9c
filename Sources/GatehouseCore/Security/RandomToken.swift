import Foundation
import Crypto

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
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
