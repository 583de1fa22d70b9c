import Foundation

/// What `gatehouse login` keeps for one gateway in `credentials.json`: the session token and how to present
/// it, the DPoP key the session is bound to, and the last `DPoP-Nonce` the gateway sent.
struct StoredCredential: Codable, Sendable, Equatable {
    /// The gateway's base URL, normalized (``normalizedGateway(_:)``); also the entry's key.
    var gateway: String
    /// The provider the session was signed in with.
    var provider: String
    /// The session token of the 201 grant.
    var sessionToken: String
    /// `DPoP` or `Bearer`, as the grant said: the scheme of the `Authorization` header.
    var tokenType: String
    /// When the session ends at the latest (now + `expires_in` at sign-in).
    var expiresAt: Date?
    /// The P-256 private key of the DPoP binding, PKCS#8 PEM.
    var dpopPrivateKey: String?
    /// The last `DPoP-Nonce` the gateway sent, for the next proof.
    var dpopNonce: String?
    /// `--ca-file` of the sign-in (absolute): what `whoami`, `api` and `logout` trust for this gateway unless given
    /// another.
    var caFile: String? = nil

    enum CodingKeys: String, CodingKey {
        case gateway, provider
        case sessionToken = "session_token"
        case tokenType = "token_type"
        case expiresAt = "expires_at"
        case dpopPrivateKey = "dpop_private_key"
        case dpopNonce = "dpop_nonce"
        case caFile = "ca_file"
    }

    /// Whether requests carry a DPoP proof: the grant said `DPoP` and the key is there.
    var isDPoPBound: Bool {
        tokenType.caseInsensitiveCompare("DPoP") == .orderedSame && dpopPrivateKey != nil
    }

    /// The value of the `Authorization` header: `<token_type> <session_token>`.
    var authorization: String { "\(tokenType) \(sessionToken)" }

    /// A gateway URL as entries are keyed: trimmed, without trailing slashes; only `http` and `https` URLs with
    /// a host and without query or fragment are accepted.
    static func normalizedGateway(_ raw: String) throws -> String {
        var url = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        while url.hasSuffix("/") { url.removeLast() }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil
        else {
            throw ClientFailure("'\(raw)' is not a gateway URL: give http(s)://host[:port][/path]")
        }
        return url
    }
}
