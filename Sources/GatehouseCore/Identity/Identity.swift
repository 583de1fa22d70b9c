public import Foundation

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
    /// The provider's own session (OpenID Connect `sid`): what a back-channel logout names.
    public var providerSessionID: String?
    /// The authentication context class the provider reports (OIDC `acr`).
    public var acr: String?
    /// The authentication methods the provider reports (OIDC `amr`).
    public var amr: [String]?
    /// When the person last authenticated at the provider (OIDC `auth_time`; the login's time when absent).
    public var authTime: Date?

    public init(
        subject: String, email: String? = nil, name: String? = nil, groups: [String] = [], claims: [String: String] = [:],
        listClaims: [String: [String]] = [:], providerSessionID: String? = nil, acr: String? = nil, amr: [String]? = nil,
        authTime: Date? = nil
    ) {
        self.subject = subject
        self.email = email
        self.name = name
        self.groups = groups
        self.claims = claims
        self.listClaims = listClaims
        self.providerSessionID = providerSessionID
        self.acr = acr
        self.amr = amr
        self.authTime = authTime
    }

    /// The value of the claim `name` as one field value: a string claim as it is, a list joined with `,`.
    public func claimValue(_ name: String) -> String? {
        claims[name] ?? listClaims[name].map { $0.joined(separator: ",") }
    }

    // Identities stored before the later fields existed decode with them absent.
    private enum CodingKeys: String, CodingKey {
        case subject, email, name, groups, claims, listClaims, acr, amr
        case providerSessionID = "sid"
        case authTime = "auth_time"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(String.self, forKey: .subject)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        groups = try container.decode([String].self, forKey: .groups)
        claims = try container.decode([String: String].self, forKey: .claims)
        listClaims = try container.decodeIfPresent([String: [String]].self, forKey: .listClaims) ?? [:]
        providerSessionID = try container.decodeIfPresent(String.self, forKey: .providerSessionID)
        acr = try container.decodeIfPresent(String.self, forKey: .acr)
        amr = try container.decodeIfPresent([String].self, forKey: .amr)
        authTime = try container.decodeIfPresent(Date.self, forKey: .authTime)
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
        try container.encodeIfPresent(providerSessionID, forKey: .providerSessionID)
        try container.encodeIfPresent(acr, forKey: .acr)
        try container.encodeIfPresent(amr, forKey: .amr)
        try container.encodeIfPresent(authTime, forKey: .authTime)
    }
}
