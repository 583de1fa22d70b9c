import Foundation
import GatehouseCore

/// RFC 7662 token introspection, the client authenticated exactly as at the provider's token endpoint
/// (``OAuth2TokenEndpoint``): `active` decides, then the claims' own checks (``BearerTokenClaims``; an
/// answer without `aud` is accepted, one with `aud` must name one of `audiences`).
struct TokenIntrospectionClient: Sendable {
    let endpoint: OAuth2TokenEndpoint
    let claims: BearerTokenClaims
    let clock: TimeSource

    /// The verdict of the introspection endpoint at `url` on `token`.
    func introspect(_ token: String, url: String) async -> BearerTokenVerdict {
        let response: TransportResponse
        do {
            response = try await endpoint.post(url: url, fields: [("token", token), ("token_type_hint", "access_token")])
        } catch {
            return .unavailable("The provider's introspection endpoint could not be reached.")
        }
        // A refused client (401/403) or a server error is no answer about the token.
        guard response.status == 200 else { return .unavailable("The provider's introspection endpoint answered \(response.status).") }
        guard let answer = response.json?.objectValue else { return .unavailable("The provider's introspection answer is not a JSON object.") }
        guard case .bool(true)? = answer["active"] else { return .refused("The provider says the token is not active.") }
        // RFC 7662 §2.2: `exp`, `iat` and `nbf` are integer timestamps; an answer with text there is not trusted
        // (read as text, `"exp": "inf"` would never expire).
        if let name = NumericDate.malformedClaim(in: answer) { return .refused("The introspection answer's \(name) is not a JSON number.") }
        if let exp = NumericDate("exp", in: answer).seconds, clock.now().timeIntervalSince1970 >= exp { return .refused("The token has expired.") }
        if let type = answer["token_type"]?.stringValue, !["bearer", "access_token"].contains(type.lowercased()) {
            return .refused("The token is not an access token.")
        }
        return claims.verdict(answer, audienceRequired: false)
    }
}
