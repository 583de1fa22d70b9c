/// A provider's own API upstream (`api:` in a provider file), reached at `/v1/proxy/{id}/…`.
public struct ProviderAPI: Sendable, Equatable {
    /// Base URL; proxied paths never leave it.
    public var url: String
    public var authentication: APIAuthentication

    public init(url: String, authentication: APIAuthentication = .bearer) {
        self.url = url
        self.authentication = authentication
    }

    /// Reads `api:`; `defaultAuthentication` is the kind's default (`query` for SPiD, `wrap` for ACS).
    public init?(_ map: ConfigMap?, defaultAuthentication: APIAuthentication = .bearer) throws {
        guard let map else { return nil }
        url = try map.requiredURL("url")
        switch try map.choice("auth", ["bearer", "query", "wrap", "none"]) {
        case nil:
            authentication = defaultAuthentication
            _ = try map.string("parameter")
        case "bearer": authentication = .bearer
        case "query":
            let parameter = try map.string("parameter")
            if case .query(let fallback) = defaultAuthentication {
                authentication = .query(parameter: parameter ?? fallback)
            } else {
                guard let parameter else { throw map.error("parameter", "'\(map.qualified("parameter"))' is required when auth is query") }
                authentication = .query(parameter: parameter)
            }
        case "wrap": authentication = .wrap
        default: authentication = .none
        }
        try map.finish()
    }
}
