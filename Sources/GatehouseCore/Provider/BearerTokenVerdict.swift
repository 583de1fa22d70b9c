public import Foundation

/// What a provider says of an access token it issued, presented to the gateway as `Authorization: Bearer`
/// by a machine client (``BearerTokenProvider``).
public enum BearerTokenVerdict: Sendable, Equatable {
    /// The token is the provider's, valid, meant for this gateway and grants what `bearer_tokens` requires.
    case accepted(BearerTokenGrant)
    /// Not a token this provider vouches for; `reason` describes only the client's own token, so it is safe to show.
    case refused(String)
    /// The provider's token, valid and meant for this gateway, but without every scope `bearer_tokens.required_scopes`
    /// lists (`required`, all of them, for the challenge's `scope`): RFC 6750 §3.1 `insufficient_scope`, which is
    /// a 403, not a 401, since presenting the same token again can never succeed and a new sign-in would not help.
    case insufficientScope(required: [String])
    /// The provider could not be asked (its JWKS or introspection endpoint unreachable).
    case unavailable(String)
}

/// An accepted provider token: who it speaks for and for how long.
public struct BearerTokenGrant: Sendable, Equatable {
    /// The identity, through the provider's `bearer_tokens.claims` mapping.
    public var identity: Identity
    /// The token's `exp`, when it has one (introspection may not say).
    public var expiresAt: Date?
    /// The scopes the token grants (`scope` or `scp`).
    public var scope: [String]

    public init(identity: Identity, expiresAt: Date?, scope: [String]) {
        self.identity = identity
        self.expiresAt = expiresAt
        self.scope = scope
    }
}
