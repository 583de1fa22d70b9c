import JWTKit

/// The claims of a DPoP proof JWT (RFC 9449 §4.2).
struct DPoPProofClaims: JWTPayload {
    /// A unique identifier of this proof (random, 16 bytes base64url).
    var jti: String
    /// The HTTP method of the request.
    var htm: String
    /// The request URL without query and fragment.
    var htu: String
    /// When the proof was made, in whole seconds since 1970.
    var iat: Int
    /// base64url(SHA-256(ASCII session token)) when the request carries the session token.
    var ath: String?
    /// The server's last `DPoP-Nonce`, when it gave one.
    var nonce: String?

    /// Proofs are only made here, never verified.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
