import Foundation
import GatehouseCore
import JWTKit

/// Verifies a JWT access token (RFC 9068 `at+jwt`, or a plain `JWT` as Keycloak and Entra ID issue them)
/// with the provider's keys: an asymmetric signature by a key of its JWKS (``JWKSCache``, never `none` or
/// HMAC: a public key used as an HMAC secret is the classic confusion), `iss`, `exp` (required), `nbf` and
/// `iat` with the provider's clock skew; then the claims' own checks (``BearerTokenClaims``: `cnf`, `aud`,
/// scopes, subject).
struct JWTAccessTokenVerifier: Sendable {
    let issuer: String
    let claims: BearerTokenClaims
    let keys: JWKSCache
    let clock: TimeSource
    /// Leeway on `exp`, `nbf` and `iat`.
    let clockSkew: TimeInterval

    /// The `typ` values accepted, compared case-insensitively (RFC 9068 §2.1; `application/` may prefix it).
    static let types: Set<String> = ["at+jwt", "application/at+jwt", "jwt"]
    /// Signature algorithms with a public key.
    static let algorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]

    /// The verdict on `token`, verified against the key set at `jwksURL`.
    func verify(_ token: String, jwksURL: String) async -> BearerTokenVerdict {
        guard let (header, payload) = Self.parts(of: token) else { return .refused("The token is not a compact JWS with a JSON header and payload.") }
        guard let typ = header["typ"]?.stringValue, Self.types.contains(typ.lowercased()) else {
            return .refused("The token's typ is not at+jwt or JWT.")
        }
        guard let alg = header["alg"]?.stringValue, Self.algorithms.contains(alg) else {
            return .refused("The token's algorithm is not accepted (none and HMAC never are).")
        }
        if header["crit"] != nil { return .refused("The token has critical header parameters the gateway does not understand.") }
        let key: JWK?
        do {
            key = try await keys.key(kid: header["kid"]?.stringValue, alg: alg, url: jwksURL)
        } catch {
            return .unavailable("The provider's keys could not be fetched.")
        }
        guard let key, let collection = try? await JWKSCache.verifier(for: key) else {
            return .refused("The provider has no key for this token.")
        }
        do {
            _ = try await collection.verify(token, as: SignatureOnly.self)
        } catch {
            return .refused("The token's signature does not verify.")
        }
        guard payload["iss"]?.stringValue == issuer else { return .refused("The token's iss is not the provider's issuer.") }
        let now = clock.now().timeIntervalSince1970
        // NumericDates are JSON numbers only: `"exp": "inf"` read as text would never expire.
        if let name = NumericDate.malformedClaim(in: payload) { return .refused("The token's \(name) is not a JSON number (NumericDate).") }
        guard let exp = NumericDate("exp", in: payload).seconds else { return .refused("The token has no exp.") }
        guard now < exp + clockSkew else { return .refused("The token has expired.") }
        if let nbf = NumericDate("nbf", in: payload).seconds, nbf > now + clockSkew { return .refused("The token is not valid yet (nbf).") }
        if let iat = NumericDate("iat", in: payload).seconds, iat > now + clockSkew { return .refused("The token is issued in the future (iat).") }
        return claims.verdict(payload, audienceRequired: true)
    }

    /// The decoded header and payload of a compact JWS; `nil` when it is not one.
    static func parts(of token: String) -> (header: [String: JSONValue], payload: [String: JSONValue])? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(String(parts[0])), let header = JSONValue.parse(headerData)?.objectValue,
            let payloadData = Base64URL.decode(String(parts[1])), let payload = JSONValue.parse(payloadData)?.objectValue
        else { return nil }
        return (header, payload)
    }

    /// jwt-kit checks the signature; the claims are read and checked above.
    private struct SignatureOnly: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
