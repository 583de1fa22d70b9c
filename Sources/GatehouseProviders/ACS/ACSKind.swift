public import GatehouseCore

/// `kind: acs`: Azure ACS, whose sign-in result page calls `window.external.Notify(json)`.
public enum ACSKind: ProviderKind {
    public static let kind = "acs"

    public static var defaultAPIAuthentication: APIAuthentication { .wrap }
    public static var apiAuthenticationStyles: [APIAuthentication] { [.wrap] }

    public static var defaultClaims: ClaimMapping {
        ClaimMapping(
            subject: ACSProvider.nameIdentifierClaim, email: ACSProvider.emailClaim,
            name: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", groups: "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"
        )
    }

    public static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let configuration = try ACSProvider.Configuration(settings)
        try InsecureHTTPPolicy.check(settings, keys: ["jwks_url"])
        try settings.finish()
        return ACSProvider(descriptor: descriptor, configuration: configuration, context: context)
    }
}
