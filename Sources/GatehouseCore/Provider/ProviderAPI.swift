/// A provider's own API upstream (`api:` in a provider file), reached at `/v1/proxy/{id}/…`.
public struct ProviderAPI: Sendable, Equatable {
    /// Base URL; proxied paths never leave it.
    public var url: String
    public var authentication: APIAuthentication

    public init(url: String, authentication: APIAuthentication = .bearer) {
        self.url = url
        self.authentication = authentication
    }

    /// Reads `api:`. `defaultAuthentication` is the kind's default (`query` for SPiD, `wrap` for ACS);
    /// `styles` are the kind's own attachment styles, valid `auth:` values besides bearer, query and none.
    public init?(_ map: ConfigMap?, defaultAuthentication: APIAuthentication = .bearer, styles: [APIAuthentication] = []) throws {
        guard let map else { return nil }
        url = try map.requiredURL("url")
        let own = Dictionary(styles.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        switch try map.choice("auth", ["bearer", "query", "none"] + styles.map(\.name)) {
        case nil:
            authentication = defaultAuthentication
            _ = try map.string("parameter")
        case "bearer": authentication = .bearer
        case "query":
            let parameter = try map.string("parameter")
            if defaultAuthentication.name == "query", let fallback = defaultAuthentication.parameter {
                authentication = .query(parameter: parameter ?? fallback)
            } else {
                if parameter == nil { try map.report("parameter", "'\(map.qualified("parameter"))' is required when auth is query") }
                authentication = .query(parameter: parameter ?? "")
            }
        case "none": authentication = .none
        case let name?: authentication = own[name] ?? .bearer
        }
        try map.finish()
    }
}
