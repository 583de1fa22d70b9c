/// The normalized identity every provider kind produces.
public struct Identity: Sendable, Codable, Equatable {
    /// Stable identifier of the user at the provider.
    public var subject: String
    public var email: String?
    public var name: String?
    public var groups: [String]
    /// Further string claims the provider returned (no tokens).
    public var claims: [String: String]
    /// The claims that are lists of strings (numbers and booleans as text), by name: what `identity_headers.claims`
    /// sends joined with `,`. Empty for sessions stored before they were kept.
    public var listClaims: [String: [String]]

    public init(
        subject: String, email: String? = nil, name: String? = nil, groups: [String] = [], claims: [String: String] = [:],
        listClaims: [String: [String]] = [:]
    ) {
        self.subject = subject
        self.email = email
        self.name = name
        self.groups = groups
        self.claims = claims
        self.listClaims = listClaims
    }

    /// The value of the claim `name` as one field value: a string claim as it is, a list joined with `,`.
    public func claimValue(_ name: String) -> String? {
        claims[name] ?? listClaims[name].map { $0.joined(separator: ",") }
    }

    private enum CodingKeys: String, CodingKey {
        case subject, email, name, groups, claims, listClaims
    }

    /// Sessions stored before ``listClaims`` was kept have none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(String.self, forKey: .subject)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        groups = try container.decode([String].self, forKey: .groups)
        claims = try container.decode([String: String].self, forKey: .claims)
        listClaims = try container.decodeIfPresent([String: [String]].self, forKey: .listClaims) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subject, forKey: .subject)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encode(groups, forKey: .groups)
        try container.encode(claims, forKey: .claims)
        // Not written when empty: sessions without list claims keep the stored form they always had.
        if !listClaims.isEmpty { try container.encode(listClaims, forKey: .listClaims) }
    }
}
