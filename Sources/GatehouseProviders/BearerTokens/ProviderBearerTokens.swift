import Foundation
import GatehouseCore

/// What an `oidc` or `oauth2` adapter needs to vouch for its own access tokens (``BearerTokenProvider``):
/// `bearer_tokens:` with the file's claim mapping, the provider's key cache and its clock skew. One per
/// provider, made when the file is loaded.
struct ProviderBearerTokens: Sendable {
    let settings: BearerTokenSettings
    let claims: BearerTokenClaims
    let keys: JWKSCache
    let context: ProviderContext
    let clockSkew: TimeInterval

    /// The leeway on `exp`, `nbf` and `iat` of kinds without a `clock_skew_seconds` key.
    static let defaultClockSkew: TimeInterval = 60

    init(settings: BearerTokenSettings, fileClaims: ClaimMapping, keys: JWKSCache, context: ProviderContext, clockSkew: TimeInterval) {
        self.settings = settings
        self.claims = BearerTokenClaims(settings: settings, fileClaims: fileClaims)
        self.keys = keys
        self.context = context
        self.clockSkew = clockSkew
    }

    /// How long a verdict is reused.
    var cacheLifetime: TimeInterval { TimeInterval(settings.cacheSeconds) }

    /// A JWT access token verified against `issuer` and the key set at `jwksURL`.
    func verifyJWT(_ token: String, issuer: String, jwksURL: String) async -> BearerTokenVerdict {
        guard settings.accept else { return .refused("This provider does not accept bearer tokens.") }
        let verifier = JWTAccessTokenVerifier(issuer: issuer, claims: claims, keys: keys, clock: context.clock, clockSkew: clockSkew)
        return await verifier.verify(token, jwksURL: jwksURL)
    }

    /// An opaque token introspected at `url`, the client authenticated as `tokenEndpoint` does it; an answer
    /// without `sub` gets the person's claims from `userinfoEndpoint` (``TokenIntrospectionClient``).
    func introspect(_ token: String, url: String, tokenEndpoint: OAuth2TokenEndpoint, userinfoEndpoint: String?) async -> BearerTokenVerdict {
        guard settings.accept else { return .refused("This provider does not accept bearer tokens.") }
        let client = TokenIntrospectionClient(
            endpoint: tokenEndpoint, claims: claims, clock: context.clock, userinfoEndpoint: userinfoEndpoint, http: context.http)
        return await client.introspect(token, url: url)
    }
}
