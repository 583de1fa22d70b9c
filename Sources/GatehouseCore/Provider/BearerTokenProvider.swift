public import Foundation

/// A provider that may vouch for access tokens it issued itself, so that a machine client holding one
/// calls the backend without a Gatehouse session (`bearer_tokens:` in `oidc` and `oauth2` provider files).
///
/// The server only asks; how a token is verified (a JWT against the provider's JWKS, an opaque token by
/// RFC 7662 introspection) stays in the adapter.
public protocol BearerTokenProvider: AuthProvider {
    /// Whether the file says `bearer_tokens.accept: true`.
    var acceptsBearerTokens: Bool { get }
    /// The `iss` a JWT access token of this provider names; `nil` when it has none configured.
    var bearerTokenIssuer: String? { get }
    /// How long an accepted token's verdict may be reused (`bearer_tokens.cache_seconds`), never past its `exp`.
    var bearerTokenCacheLifetime: TimeInterval { get }
    /// Verifies a JWT access token whose `iss` is ``bearerTokenIssuer``.
    func verifyBearerJWT(_ token: String) async -> BearerTokenVerdict
    /// Introspects an opaque token (RFC 7662); `nil` when the provider has no introspection endpoint.
    func introspectBearerToken(_ token: String) async -> BearerTokenVerdict?
}
