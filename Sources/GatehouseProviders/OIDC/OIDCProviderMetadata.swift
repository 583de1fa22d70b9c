import Foundation
public import GatehouseCore

/// The parts of a discovery document (OpenID Connect Discovery 1.0 / RFC 8414) the gateway uses,
/// after the provider file's overrides are applied.
public struct OIDCProviderMetadata: Sendable, Equatable {
    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var userinfoEndpoint: String?
    public var jwksURI: String
    public var revocationEndpoint: String?
    public var endSessionEndpoint: String?
    /// RFC 7662 (`introspection_endpoint`, RFC 8414); `bearer_tokens.introspection_endpoint` wins.
    public var introspectionEndpoint: String?
    /// RFC 9207: the provider sends `iss` with every authorization response.
    public var issParameterSupported: Bool

    /// Reads a discovery document; endpoints set in `configuration` win.
    /// - Throws: ``ProviderError/rejected(code:description:)`` `discovery_issuer_mismatch` for another issuer,
    ///   `insecure_endpoint` for an `http` endpoint that ``InsecureHTTPPolicy`` refuses;
    ///   ``ProviderError/invalidResponse(_:)`` when required members are missing.
    public init(document: JSONValue, configuration: OIDCProvider.Configuration) throws {
        func endpoint(_ name: String, _ override: String?) -> String? {
            override ?? document[name]?.stringValue
        }
        guard let issuer = document["issuer"]?.stringValue else {
            throw ProviderError.invalidResponse("The discovery document has no issuer.")
        }
        guard issuer == configuration.issuer else {
            throw ProviderError.rejected(
                code: "discovery_issuer_mismatch", description: "The discovery document names issuer '\(issuer)', not '\(configuration.issuer)'.")
        }
        guard let authorization = endpoint("authorization_endpoint", configuration.authorizationEndpoint),
            let token = endpoint("token_endpoint", configuration.tokenEndpoint),
            let jwks = endpoint("jwks_uri", configuration.jwksURI)
        else {
            throw ProviderError.invalidResponse("The discovery document lacks authorization_endpoint, token_endpoint or jwks_uri.")
        }
        self.issuer = issuer
        self.authorizationEndpoint = authorization
        self.tokenEndpoint = token
        self.jwksURI = jwks
        self.userinfoEndpoint = endpoint("userinfo_endpoint", configuration.userinfoEndpoint)
        self.revocationEndpoint = endpoint("revocation_endpoint", configuration.revocationEndpoint)
        self.endSessionEndpoint = endpoint("end_session_endpoint", configuration.endSessionEndpoint)
        self.introspectionEndpoint = endpoint("introspection_endpoint", configuration.bearerTokens.introspectionEndpoint)
        // No secrets in clear: the endpoints that receive the client secret, codes or tokens, and the keys.
        let policy = InsecureHTTPPolicy(allowsInsecureHTTP: configuration.allowInsecureHTTP)
        for (name, url) in [
            ("token_endpoint", token), ("userinfo_endpoint", userinfoEndpoint), ("revocation_endpoint", revocationEndpoint), ("jwks_uri", jwks),
            // Used (and so held to the rule) only when the file accepts bearer tokens.
            ("introspection_endpoint", configuration.bearerTokens.accept ? introspectionEndpoint : nil),
        ] {
            try policy.check(discovered: url, name: name)
        }
        if case .bool(let supported)? = document["authorization_response_iss_parameter_supported"] {
            self.issParameterSupported = supported
        } else {
            self.issParameterSupported = false
        }
    }
}
