import Foundation

/// A DPoP proof that passed every check but the replay check (``DPoPVerifier/spend(_:status:)``).
struct DPoPProof: Sendable {
    /// The RFC 7638 thumbprint of the key that signed it.
    let thumbprint: String
    let jti: String
    let issuedAt: Date
}
