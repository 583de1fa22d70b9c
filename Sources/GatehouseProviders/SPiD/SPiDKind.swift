public import GatehouseCore

/// `kind: spid`: Schibsted SPiD, OAuth 2.0 with its own token fields, API envelope and logout.
public enum SPiDKind: ProviderKind {
    public static let kind = "spid"
    public static let defaultAPIAuthentication = APIAuthentication.query(parameter: "oauth_token")
    /// SPiD names the user in the token response's `user_id`; `/api/2/me` adds email and name.
    public static let defaultClaims = ClaimMapping(subject: "user_id", email: "email", name: "displayName")

    public static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let configuration = try SPiDProvider.Configuration(settings)
        try InsecureHTTPPolicy.check(settings, keys: ["base_url", "token_endpoint", "userinfo_endpoint", "revocation_endpoint", "logout_endpoint"])
        try settings.finish()
        var descriptor = descriptor
        if descriptor.api == nil, let base = configuration.baseURL {
            descriptor.api = ProviderAPI(url: base + "/api/2", authentication: defaultAPIAuthentication)
        }
        return SPiDProvider(descriptor: descriptor, configuration: configuration, context: context)
    }
}
