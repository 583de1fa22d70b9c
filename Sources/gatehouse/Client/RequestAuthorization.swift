/// How one gateway request proves who sends it: the `Authorization` header (the session token) and, for a
/// DPoP-bound session or the sign-in exchange, the key that signs a fresh `DPoP` proof.
struct RequestAuthorization: Sendable {
    /// The `Authorization` header value (`DPoP <token>` or `Bearer <token>`), if any.
    var header: String?
    /// The key that signs the request's `DPoP` proof, if any.
    var dpopKey: DPoPKey?
    /// The session token the proof's `ath` covers (nil on the code exchange).
    var sessionToken: String?
    /// The nonce the first proof carries.
    var nonce: String?

    /// Nothing: an anonymous request.
    static let none = RequestAuthorization()

    /// The authorization of a stored session: its token, and DPoP proofs when it is DPoP-bound.
    init(_ credential: StoredCredential) throws {
        header = credential.authorization
        if credential.isDPoPBound, let pem = credential.dpopPrivateKey {
            dpopKey = try DPoPKey(pem: pem)
            sessionToken = credential.sessionToken
            nonce = credential.dpopNonce
        }
    }

    init(header: String? = nil, dpopKey: DPoPKey? = nil, sessionToken: String? = nil, nonce: String? = nil) {
        self.header = header
        self.dpopKey = dpopKey
        self.sessionToken = sessionToken
        self.nonce = nonce
    }
}
