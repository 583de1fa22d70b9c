import Foundation

/// Proof Key for Code Exchange (RFC 7636), S256 only.
public enum PKCE {
    /// A fresh verifier: 32 random octets, base64url (43 characters).
    public static func makeVerifier() -> String { RandomToken.make(byteCount: 32) }

    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.sha256(verifier)
    }

    /// Whether a verifier is well formed: 43–128 characters of `[A-Za-z0-9-._~]`.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.count)
            && verifier.unicodeScalars.allSatisfy { scalar in
                CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || "-._~".unicodeScalars.contains(scalar)
            }
    }

    /// Whether a challenge has the shape of an S256 challenge (43 base64url characters).
    public static func isValidChallenge(_ challenge: String) -> Bool {
        challenge.count == 43 && Base64URL.decode(challenge)?.count == 32
    }

    /// Constant-time check of a verifier against an S256 challenge.
    public static func verify(_ verifier: String, against challenge: String) -> Bool {
        guard isValidVerifier(verifier) else { return false }
        return ConstantTime.equal(Data(Self.challenge(for: verifier).utf8), Data(challenge.utf8))
    }
}
