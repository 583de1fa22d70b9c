public import GatehouseCore

/// `kind: oauth2`: a generic OAuth 2.0 authorization-code server (SURFnet's php-oauth is the reference).
public enum OAuth2Kind: ProviderKind {
    public static let kind = "oauth2"

    public static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let configuration = try OAuth2Provider.Configuration(settings, claims: descriptor.claims)
        try InsecureHTTPPolicy.check(
            settings, keys: ["token_endpoint", "userinfo_endpoint", "revocation_endpoint", "jwks_url", BearerTokenSettings.introspectionEndpointKey])
        try settings.finish()
        return OAuth2Provider(descriptor: descriptor, configuration: configuration, context: context)
    }
}
