import Foundation
import GatehouseCore

/// RFC 7638 JWK thumbprints: the SHA-256 of the key's required members, as JSON with the member names in
/// lexicographic order and no white space, base64url-encoded. What a DPoP-bound session remembers of its key.
enum JWKThumbprint {
    /// The required members of each key type (RFC 7638 §3.2), in lexicographic order.
    private static let members: [String: [String]] = [
        "EC": ["crv", "kty", "x", "y"],
        "RSA": ["e", "kty", "n"],
        "OKP": ["crv", "kty", "x"],
    ]

    /// The thumbprint of a public JWK (its string members by name), or `nil` when a required member is missing.
    static func of(_ jwk: [String: String]) -> String? {
        guard let kty = jwk["kty"], let names = members[kty] else { return nil }
        var json = "{"
        for (index, name) in names.enumerated() {
            // Base64url values and curve names: nothing that JSON would escape; anything else is refused
            // rather than serialized in a way another implementation might not reproduce.
            guard let value = jwk[name], !value.isEmpty,
                value.utf8.allSatisfy({ PercentEncoding.isUnreserved($0) })
            else { return nil }
            json += (index == 0 ? "" : ",") + "\"\(name)\":\"\(value)\""
        }
        json += "}"
        return Base64URL.sha256(json)
    }
}
