import Foundation
import GatehouseCore

/// RFC 7662 token introspection, the client authenticated exactly as at the provider's token endpoint
/// (``OAuth2TokenEndpoint``): `active` decides, then the claims' own checks (``BearerTokenClaims``; an
/// answer without `aud` is accepted, one with `aud` must name one of `audiences`).
///
/// One person, one subject: an answer without `sub` (django-oauth-toolkit's has `username`) says who the token is
/// for in other words than the provider's sign-in does. With a userinfo endpoint, the token is presented there and
/// the person's claims (subject, email, …) come from its answer, as at a sign-in; what the token may do (`aud`,
/// `scope`, `cnf`, `exp`) still comes from the introspection answer. A userinfo endpoint that refuses the token
/// (a client's own token, with no person behind it) leaves the answer as it is.
struct TokenIntrospectionClient: Sendable {
    let endpoint: OAuth2TokenEndpoint
    let claims: BearerTokenClaims
    let clock: TimeSource
    /// Where the person's claims are asked for when the answer has no `sub`; `nil`: the provider has none.
    var userinfoEndpoint: String? = nil
    var http: ProviderHTTP? = nil

    /// Claims that say what the token may do, which only the introspection answer decides.
    static let grantClaims: Set<String> = ["active", "aud", "cnf", "scope", "scp", "exp", "iat", "nbf", "token_type", "client_id", "iss", "jti"]

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
        var merged = answer
        if answer["sub"] == nil, let userinfoEndpoint, let http {
            switch await userinfo(token, at: userinfoEndpoint, http: http) {
            case .claims(let person):
                for (name, value) in person where !Self.grantClaims.contains(name) { merged[name] = value }
            case .noPerson:
                break
            case .unavailable(let reason):
                return .unavailable(reason)
            }
        }
        return claims.verdict(merged, audienceRequired: false)
    }

    private enum UserinfoAnswer {
        case claims([String: JSONValue])
        case noPerson
        case unavailable(String)
    }

    /// The userinfo document for `token`: its claims when it names a subject; `.noPerson` when the endpoint refuses
    /// the token (401/403: a token without `openid`, or a client's) or names no one.
    private func userinfo(_ token: String, at url: String, http: ProviderHTTP) async -> UserinfoAnswer {
        let request = TransportRequest(url: url, headers: [("Accept", "application/json"), ("Authorization", "Bearer \(token)")])
        let response: TransportResponse
        do {
            response = try await http.send(request, unreachable: "The provider's userinfo endpoint could not be reached.")
        } catch {
            return .unavailable("The provider's userinfo endpoint could not be reached.")
        }
        if response.status == 401 || response.status == 403 { return .noPerson }
        guard response.status == 200 else { return .unavailable("The provider's userinfo endpoint answered \(response.status).") }
        guard let person = response.json?.objectValue, let subject = person["sub"]?.stringValue, !subject.isEmpty else { return .noPerson }
        return .claims(person)
    }
}
