public import Crypto

extension Base64URL {
    /// The base64url SHA-256 of `text`'s UTF-8: a PKCE S256 challenge, a DPoP `ath`, a JWK thumbprint. Hashed from
    /// the string's own bytes and encoded straight into the result: a DPoP `ath` is checked on every bound request.
    public static func sha256(_ text: String) -> String {
        var hasher = SHA256()
        hasher.update(utf8: text)
        return hasher.finalize().withUnsafeBytes { encode($0) }
    }
}

extension SHA256 {
    /// Feeds `text`'s UTF-8 to the hash without copying it into `Data` first.
    public mutating func update(utf8 text: String) {
        var text = text
        text.withUTF8 { update(bufferPointer: UnsafeRawBufferPointer($0)) }
    }
}
