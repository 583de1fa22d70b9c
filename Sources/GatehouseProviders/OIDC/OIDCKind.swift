public import GatehouseCore

/// `kind: oidc`: any OpenID Connect provider, configured from its issuer's discovery document.
public enum OIDCKind: ProviderKind {
    public static let kind = "oidc"

    public static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let configuration = try OIDCProvider.Configuration(settings, claims: descriptor.claims)
        try InsecureHTTPPolicy.check(
            settings,
            keys: ["issuer", "token_endpoint", "userinfo_endpoint", "revocation_endpoint", "jwks_uri", BearerTokenSettings.introspectionEndpointKey])
        try settings.finish()
        return OIDCProvider(descriptor: descriptor, configuration: configuration, context: context)
    }
}
