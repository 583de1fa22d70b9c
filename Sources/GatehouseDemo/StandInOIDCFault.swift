/// What the OIDC stand-in does wrong on purpose, for the gateway's refusal tests.
public enum StandInOIDCFault: Sendable, Equatable {
    /// Everything correct.
    case none
    /// The ID token's signature is made with a key that is not in the JWKS.
    case wrongSignature
    /// `alg: none` and an empty signature.
    case algNone
    /// HS256 with the provider's public key (its JWK JSON) as the HMAC secret.
    case hmacWithPublicKey
    /// `iss` is not the issuer.
    case wrongIssuer
    /// `aud` is another client.
    case wrongAudience
    /// `exp` an hour ago.
    case expired
    /// A nonce that is not the login's.
    case wrongNonce
    /// No nonce at all.
    case missingNonce
    /// Refreshed ID tokens name another user.
    case changedSubjectOnRefresh
    /// A `kid` the JWKS does not hold (signed with a key nobody publishes).
    case unknownKid
    /// The authorization response's `iss` is another server.
    case wrongCallbackIssuer
    /// The ID token's NumericDate `claim` (`exp`, `iat`, `nbf`, `auth_time`) as the JSON string `text`
    /// (`"exp": "9999999999"`, `"inf"`) instead of a number.
    case textDate(claim: String, text: String)
}
