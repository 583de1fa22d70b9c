/// One condition of an access rule or of `access.login`: every key that is set must match (ALL); a key
/// with a list matches any of its values. `email_domain` is the exact domain after the `@`, in any case
/// (never a suffix: `evil-example.com` is not `example.com`).
public struct AccessCondition: Sendable, Equatable {
    public var providers: [String]?
    public var subjects: [String]?
    public var emails: [String]?
    public var emailDomains: [String]?
    /// Read from the identity's `email_verified` claim (`"true"`).
    public var emailVerified: Bool?
    public var groups: [String]?
    /// Claim name → accepted values.
    public var claims: [String: [String]]

    public init(
        providers: [String]? = nil, subjects: [String]? = nil, emails: [String]? = nil, emailDomains: [String]? = nil,
        emailVerified: Bool? = nil, groups: [String]? = nil, claims: [String: [String]] = [:]
    ) {
        self.providers = providers
        self.subjects = subjects
        self.emails = emails
        self.emailDomains = emailDomains
        self.emailVerified = emailVerified
        self.groups = groups
        self.claims = claims
    }

    /// Whether no key is set (such a condition is refused by the configuration: it would match everyone).
    public var isEmpty: Bool {
        providers == nil && subjects == nil && emails == nil && emailDomains == nil && emailVerified == nil && groups == nil && claims.isEmpty
    }

    /// Whether a signed-in user of `provider` with `identity` meets every key.
    public func matches(provider: String, identity: Identity) -> Bool {
        if let providers, !providers.contains(provider) { return false }
        if let subjects, !subjects.contains(identity.subject) { return false }
        if let emails {
            guard let email = identity.email?.lowercased(), emails.contains(where: { $0.lowercased() == email }) else { return false }
        }
        if let emailDomains {
            guard let email = identity.email, let at = email.lastIndex(of: "@") else { return false }
            let domain = email[email.index(after: at)...].lowercased()
            guard emailDomains.contains(where: { $0.lowercased() == domain }) else { return false }
        }
        if let emailVerified, (identity.claims["email_verified"] == "true") != emailVerified { return false }
        if let groups, !groups.contains(where: identity.groups.contains) { return false }
        for (name, values) in claims {
            guard let value = identity.claims[name], values.contains(value) else { return false }
        }
        return true
    }
}
