import GatehouseCore

/// A stand-in for `kind: oauth2` that reads the documented keys of the oauth2 kind, so these tests do not depend on the
/// real adapter.
enum TestOAuth2Kind: ProviderKind {
    static let kind = "oauth2"

    static func make(descriptor: ProviderDescriptor, settings: ConfigMap, context: ProviderContext) throws -> any AuthProvider {
        var values: [String: String] = [:]
        values["authorization_endpoint"] = try settings.requiredURL("authorization_endpoint")
        values["token_endpoint"] = try settings.requiredURL("token_endpoint")
        values["userinfo_endpoint"] = try settings.url("userinfo_endpoint")
        values["revocation_endpoint"] = try settings.url("revocation_endpoint")
        values["issuer"] = try settings.string("issuer")
        values["client_id"] = try settings.requiredString("client_id")
        values["client_secret"] = try settings.secret("client_secret")
        values["token_endpoint_auth_method"] = try settings.choice(
            "token_endpoint_auth_method", ["client_secret_basic", "client_secret_post", "none"])
        values["scopes"] = try settings.strings("scopes")?.joined(separator: " ")
        try settings.finish()
        return TestProvider(descriptor: descriptor, settings: values)
    }
}
