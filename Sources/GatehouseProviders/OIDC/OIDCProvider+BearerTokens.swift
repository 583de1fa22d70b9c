public import Foundation
public import GatehouseCore

/// `bearer_tokens:` of an `oidc` file: JWTs against the discovered `jwks_uri` (their `iss` must be the
/// issuer), opaque tokens at `bearer_tokens.introspection_endpoint` or the discovered `introspection_endpoint`,
/// the client authenticated as at the token endpoint.
extension OIDCProvider: BearerTokenProvider {
    public var acceptsBearerTokens: Bool { bearerTokens != nil }

    public var bearerTokenIssuer: String? { configuration.issuer }

    public var bearerTokenCacheLifetime: TimeInterval { bearerTokens?.cacheLifetime ?? 0 }

    public func verifyBearerJWT(_ token: String) async -> BearerTokenVerdict {
        guard let bearerTokens else { return .refused("This provider does not accept bearer tokens.") }
        let metadata: OIDCProviderMetadata
        do {
            metadata = try await discovery.current()
        } catch {
            return .unavailable("The provider's discovery document could not be fetched.")
        }
        return await bearerTokens.verifyJWT(token, issuer: metadata.issuer, jwksURL: metadata.jwksURI)
    }

    public func introspectBearerToken(_ token: String) async -> BearerTokenVerdict? {
        guard let bearerTokens else { return nil }
        let metadata: OIDCProviderMetadata
        do {
            metadata = try await discovery.current()
        } catch {
            // Whether it advertises an endpoint is unknown: no answer, rather than a refusal it may not mean.
            return .unavailable("The provider's discovery document could not be fetched.")
        }
        guard let url = metadata.introspectionEndpoint else { return nil }
        return await bearerTokens.introspect(
            token, url: url, tokenEndpoint: oauth2(metadata).tokenEndpoint, userinfoEndpoint: metadata.userinfoEndpoint)
    }
}
