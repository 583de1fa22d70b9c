import Foundation
import GatehouseCore

/// Validates a back-channel logout token as OpenID Connect Back-Channel Logout 1.0 §2.6 says; the signature is
/// checked with the provider's JWKS by the ID tokens' machinery (``OIDCIDTokenValidator``), never with `none` or
/// an HMAC (so never with a public key taken for a secret).
///
/// Every refusal is a ``ProviderError/rejected(code:description:)`` with a stable code: `logout_token_malformed`,
/// `logout_token_alg_not_allowed`, `invalid_logout_token_signature`, `logout_token_issuer_mismatch`,
/// `logout_token_audience_mismatch`, `logout_token_stale` (`iat` out of the skew), `logout_token_expired`,
/// `logout_token_event_missing`, `logout_token_subject_missing`, `logout_token_nonce_present`,
/// `logout_token_type_mismatch`. The `jti`'s freshness across instances is the caller's (the shared store).
struct OIDCLogoutTokenValidator: Sendable {
    let idTokens: OIDCIDTokenValidator
    let clock: TimeSource

    /// The event member a logout token must hold (§2.4).
    static let event = "http://schemas.openid.net/event/backchannel-logout"
    /// How far `iat` may be from now, either way.
    static let skew: TimeInterval = 300

    func validate(_ token: String, metadata: OIDCProviderMetadata) async throws -> LogoutToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let header = JSONValue.parse(headerData)?.objectValue,
            let payloadData = Base64URL.decode(parts[1]), let claims = JSONValue.parse(payloadData)?.objectValue
        else {
            throw Self.refusal("logout_token_malformed", "The logout token is not a compact JWS with JSON header and payload.")
        }
        guard case .string(let alg)? = header["alg"], OIDCIDTokenValidator.asymmetricAlgorithms.contains(alg) else {
            throw Self.refusal("logout_token_alg_not_allowed", "Logout tokens are accepted signed with the provider's keys only.")
        }
        if header["crit"] != nil {
            throw Self.refusal("logout_token_malformed", "The logout token has critical header parameters the gateway does not understand.")
        }
        // §2.6 step 2 and RFC 8725 §3.11: an explicit type, when given, must be this one.
        if let typ = header["typ"] {
            guard case .string(let value) = typ, ["logout+jwt", "application/logout+jwt"].contains(value.lowercased()) else {
                throw Self.refusal("logout_token_type_mismatch", "The logout token's typ is not logout+jwt.")
            }
        }
        do {
            try await idTokens.verifySignature(token, alg: alg, kid: Self.string("kid", in: header), metadata: metadata, allowingHMAC: false)
        } catch ProviderError.rejected {
            throw Self.refusal("invalid_logout_token_signature", "The logout token's signature does not verify with the provider's keys.")
        }
        return try check(claims, issuer: metadata.issuer)
    }

    /// The claim checks, once the signature holds.
    func check(_ claims: [String: JSONValue], issuer: String) throws -> LogoutToken {
        guard Self.string("iss", in: claims) == issuer else {
            throw Self.refusal("logout_token_issuer_mismatch", "The logout token's iss is not the provider's issuer.")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let audience)?: audiences = [audience]
        case .array(let values)?: audiences = values.compactMap { if case .string(let value) = $0 { value } else { nil } }
        default: audiences = []
        }
        guard audiences.contains(idTokens.configuration.clientID) else {
            throw Self.refusal("logout_token_audience_mismatch", "The logout token is not meant for this client.")
        }
        if let name = NumericDate.malformedClaim(in: claims) {
            throw Self.refusal("logout_token_malformed", "The logout token's \(name) is not a JSON number (NumericDate).")
        }
        let now = clock.now().timeIntervalSince1970
        guard let iat = NumericDate("iat", in: claims).seconds else {
            throw Self.refusal("logout_token_malformed", "The logout token has no iat.")
        }
        guard abs(now - iat) <= Self.skew else {
            throw Self.refusal("logout_token_stale", "The logout token's iat is more than 5 minutes from now.")
        }
        if let exp = NumericDate("exp", in: claims).seconds, exp <= now {
            throw Self.refusal("logout_token_expired", "The logout token has expired.")
        }
        guard let jti = Self.string("jti", in: claims), !jti.isEmpty else {
            throw Self.refusal("logout_token_malformed", "The logout token has no jti.")
        }
        guard case .object(let events)? = claims["events"], case .object = events[Self.event] else {
            throw Self.refusal("logout_token_event_missing", "The logout token's events do not hold the back-channel logout event.")
        }
        // §2.4: a present sid or sub must be a (non-empty) string.
        for name in ["sid", "sub"] where claims[name] != nil {
            guard let value = Self.string(name, in: claims), !value.isEmpty else {
                throw Self.refusal("logout_token_malformed", "The logout token's \(name) is not a string.")
            }
        }
        let sid = Self.string("sid", in: claims)
        let subject = Self.string("sub", in: claims)
        guard sid != nil || subject != nil else {
            throw Self.refusal("logout_token_subject_missing", "The logout token names neither sid nor sub.")
        }
        // §2.4: a nonce is forbidden, so that an ID token can never pass for a logout token.
        guard claims["nonce"] == nil else {
            throw Self.refusal("logout_token_nonce_present", "The logout token carries a nonce.")
        }
        return LogoutToken(jti: jti, sid: sid, subject: subject, issuedAt: Date(timeIntervalSince1970: iat))
    }

    private static func string(_ name: String, in object: [String: JSONValue]) -> String? {
        if case .string(let value)? = object[name] { value } else { nil }
    }

    static func refusal(_ code: String, _ description: String) -> ProviderError {
        .rejected(code: code, description: description)
    }
}
