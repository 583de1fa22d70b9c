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
        providerSessionID: String? = nil, acr: String? = nil, amr: [String]? = nil, authTime: Date? = nil
    ) {
        self.subject = subject
        self.email = email
        self.name = name
        self.groups = groups
        self.claims = claims
        self.providerSessionID = providerSessionID
        self.acr = acr
        self.amr = amr
        self.authTime = authTime
    }

    // Identities stored before these fields existed decode with them absent.
    enum CodingKeys: String, CodingKey {
        case subject, email, name, groups, claims, acr, amr
        case providerSessionID = "sid"
        case authTime = "auth_time"
    }
}
