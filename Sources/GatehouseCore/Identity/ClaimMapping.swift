/// Where each normalized identity field comes from (`claims:` in a provider file).
public struct ClaimMapping: Sendable, Equatable {
    public var subject: String
    public var email: String
    public var name: String
    public var groups: String

    public init(subject: String = "sub", email: String = "email", name: String = "name", groups: String = "groups") {
        self.subject = subject
        self.email = email
        self.name = name
        self.groups = groups
    }

    /// Reads `claims:` with the given defaults.
    public init(_ map: ConfigMap?, defaults: ClaimMapping = ClaimMapping()) throws {
        self = defaults
        guard let map else { return }
        subject = try map.string("subject") ?? defaults.subject
        email = try map.string("email") ?? defaults.email
        name = try map.string("name") ?? defaults.name
        groups = try map.string("groups") ?? defaults.groups
        try map.finish()
    }

    /// Builds an identity from a flat claim set; nil when the subject claim is missing.
    ///
    /// A claim name may be a dotted path into nested objects (`name.formatted`).
    public func identity(from claims: JSONValue) -> Identity? {
        guard let subject = claims[path: self.subject]?.stringValue, !subject.isEmpty else { return nil }
        var extra: [String: String] = [:]
        var lists: [String: [String]] = [:]
        if case .object(let members) = claims {
            for (key, value) in members {
                if let text = value.stringValue {
                    extra[key] = text
                } else if case .array(let items) = value {
                    let texts = items.compactMap(\.stringValue)
                    if texts.count == items.count { lists[key] = texts }
                }
            }
        }
        let groups: [String]
        switch claims[path: self.groups] {
        case .array(let items)?: groups = items.compactMap(\.stringValue)
        case .string(let text)?: groups = text.split(separator: " ").map(String.init)
        default: groups = []
        }
        return Identity(
            subject: subject,
            email: claims[path: email]?.stringValue,
            name: claims[path: name]?.stringValue,
            groups: groups,
            claims: extra,
            listClaims: lists
        )
    }
}
