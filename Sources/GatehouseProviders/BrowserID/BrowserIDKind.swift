public import GatehouseCore

/// `kind: browserid`: Mozilla BrowserID / Persona backed identity assertions, verified by the gateway.
public enum BrowserIDKind: ProviderKind {
    public static let kind = "browserid"

    public static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let configuration = try BrowserIDProvider.Configuration(settings)
        try InsecureHTTPPolicy.check(settings, keys: ["remote_verifier_url"])
        try settings.finish()
        return try BrowserIDProvider(descriptor: descriptor, configuration: configuration, context: context)
    }
}
