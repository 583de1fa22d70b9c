public import GatehouseCore

/// `kind: capture`: a legacy relying-party site that hands its token over in a cookie or the page title.
public enum CaptureKind: ProviderKind {
    public static let kind = "capture"

    public static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let configuration = try CaptureProvider.Configuration(settings)
        try InsecureHTTPPolicy.check(settings, keys: ["probe.url"])
        try settings.finish()
        return CaptureProvider(descriptor: descriptor, configuration: configuration, context: context)
    }
}
