public import Foundation
public import GatehouseCore

/// `bearer_tokens:` of an `oauth2` file: JWTs against `jwks_url` (their `iss` must be `issuer`), opaque
/// tokens at `bearer_tokens.introspection_endpoint`, the client authenticated as at `token_endpoint`.
extension OAuth2Provider: BearerTokenProvider {
    public var acceptsBearerTokens: Bool { bearerTokens != nil }

    public var bearerTokenIssuer: String? { configuration.jwksURL == nil ? nil : configuration.issuer }

    public var bearerTokenCacheLifetime: TimeInterval { bearerTokens?.cacheLifetime ?? 0 }

    public func verifyBearerJWT(_ token: String) async -> BearerTokenVerdict {
        guard let bearerTokens, let issuer = configuration.issuer, let jwksURL = configuration.jwksURL else {
            return .refused("This provider does not accept JWT bearer tokens.")
        }
        return await bearerTokens.verifyJWT(token, issuer: issuer, jwksURL: jwksURL)
    }

    public func introspectBearerToken(_ token: String) async -> BearerTokenVerdict? {
        guard let bearerTokens, let url = configuration.bearerTokens.introspectionEndpoint else { return nil }
        return await bearerTokens.introspect(token, url: url, tokenEndpoint: tokenEndpoint, userinfoEndpoint: configuration.userinfoEndpoint)
    }
}
