/// The `jwk` of a DPoP proof's header, as far as the checks need it: the public members that make up the key
/// and its RFC 7638 thumbprint, and whether any private member is there (a proof must never carry one).
struct DPoPProofKey: Decodable, Sendable {
    let kty: String?
    let crv: String?
    let x: String?
    let y: String?
    let n: String?
    let e: String?
    /// A private-key member is present (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2), whatever its value.
    let hasPrivateMembers: Bool

    private enum CodingKeys: String, CodingKey {
        case kty, crv, x, y, n, e
        case d, p, q, dp, dq, qi, oth, k
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kty = try container.decodeIfPresent(String.self, forKey: .kty)
        crv = try container.decodeIfPresent(String.self, forKey: .crv)
        x = try container.decodeIfPresent(String.self, forKey: .x)
        y = try container.decodeIfPresent(String.self, forKey: .y)
        n = try container.decodeIfPresent(String.self, forKey: .n)
        e = try container.decodeIfPresent(String.self, forKey: .e)
        hasPrivateMembers = [CodingKeys.d, .p, .q, .dp, .dq, .qi, .oth, .k].contains { container.contains($0) }
    }

    /// The public members that are present, by name.
    var members: [String: String] {
        var members: [String: String] = [:]
        for (name, value) in [("kty", kty), ("crv", crv), ("x", x), ("y", y), ("n", n), ("e", e)] {
            if let value { members[name] = value }
        }
        return members
    }
}
