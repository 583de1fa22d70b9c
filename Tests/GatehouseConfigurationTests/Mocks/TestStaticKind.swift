import GatehouseCore

/// A second kind with one key and a non-default API authentication, for registry and default tests.
enum TestStaticKind: ProviderKind {
    static let kind = "static"
    static var defaultAPIAuthentication: APIAuthentication { .query(parameter: "oauth_token") }

    static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        let token = try settings.secret("token")
        try settings.finish()
        return TestProvider(descriptor: descriptor, settings: token.map { ["token": $0] } ?? [:])
    }
}
