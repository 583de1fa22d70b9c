/// The normalized identity every provider kind produces.
public struct Identity: Sendable, Codable, Equatable {
    /// Stable identifier of the user at the provider.
    public var subject: String
    public var email: String?
    public var name: String?
    public var groups: [String]
    /// Further string claims the provider returned (no tokens).
    public var claims: [String: String]

    public init(subject: String, email: String? = nil, name: String? = nil, groups: [String] = [], claims: [String: String] = [:]) {
        self.subject = subject
        self.email = email
        self.name = name
        self.groups = groups
        self.claims = claims
    }
}
