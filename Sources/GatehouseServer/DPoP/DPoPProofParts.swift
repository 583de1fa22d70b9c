/// The JOSE header and claims of a DPoP proof, decoded into exactly the members the checks read: the header
/// by a typed decode (once per key: ``DPoPHeaderCache``), the claims by ``DPoPClaimsParser`` (on every request
/// of a bound session). A member of another JSON type than the one expected makes the whole proof malformed.
struct DPoPProofParts: Sendable {
    struct Header: Decodable, Sendable {
        let typ: String?
        let alg: String?
        let jwk: DPoPProofKey?
        /// RFC 7515 §4.1.11: extensions the recipient must understand; the gateway understands none.
        let crit: [String]?
    }

    struct Claims: Sendable, Equatable {
        let jti: String?
        let htm: String?
        let htu: String?
        let iat: Double?
        let ath: String?
        let nonce: String?
    }
}
