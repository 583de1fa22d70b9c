import Foundation
import GatehouseCore

/// The checks a provider token's claims must pass whichever way they were obtained (a verified JWT or an
/// introspection answer), and the grant they make: `cnf`, `aud`, the scopes, the identity.
struct BearerTokenClaims: Sendable {
    let settings: BearerTokenSettings
    /// The provider file's `claims`.
    let fileClaims: ClaimMapping

    /// Where the subject comes from without `bearer_tokens.claims`: a user's token has `sub`, a client
    /// credentials token often only `client_id` (or `username` in introspection answers).
    static let subjectClaims = ["sub", "username", "client_id"]

    /// The verdict on a claim set. `audienceRequired`: a JWT must carry `aud`; an introspection answer may
    /// leave it out (the provider vouched for the token as active).
    func verdict(_ claims: [String: JSONValue], audienceRequired: Bool) -> BearerTokenVerdict {
        // RFC 8705 / RFC 9449: a sender-constrained token is only good with its key's proof, which a plain
        // bearer presentation cannot carry.
        if claims["cnf"] != nil { return .refused("The token is sender-constrained (cnf); it cannot be used as a bearer token.") }
        let audiences = Self.strings(claims["aud"])
        if audienceRequired || claims["aud"] != nil {
            guard audiences.contains(where: settings.audiences.contains) else { return .refused("The token is not meant for this gateway (aud).") }
        }
        guard let identity = identity(of: .object(claims)) else { return .refused("The token names no subject.") }
        // Last: only a token valid in every other way lacks scope rather than being invalid (RFC 6750 §3.1).
        let scope = Self.scopes(of: claims)
        guard settings.requiredScopes.allSatisfy(scope.contains) else { return .insufficientScope(required: settings.requiredScopes) }
        let expiresAt = NumericDate("exp", in: claims).seconds.map(Date.init(timeIntervalSince1970:))
        return .accepted(BearerTokenGrant(identity: identity, expiresAt: expiresAt, scope: scope))
    }

    /// The identity through `bearer_tokens.claims`, or the file's mapping with the subject fallbacks.
    func identity(of claims: JSONValue) -> Identity? {
        if let mapping = settings.claims { return mapping.identity(from: claims) }
        for subject in Self.subjectClaims {
            var mapping = fileClaims
            mapping.subject = subject
            if let identity = mapping.identity(from: claims) { return identity }
        }
        return nil
    }

    /// `scope` (space-separated, RFC 8693 / RFC 9068) or `scp` (a list or a string, Entra ID and Okta).
    static func scopes(of claims: [String: JSONValue]) -> [String] {
        if let scope = claims["scope"]?.stringValue { return scope.split(separator: " ").map(String.init) }
        switch claims["scp"] {
        case .array(let items)?: return items.compactMap(\.stringValue)
        case .string(let text)?: return text.split(separator: " ").map(String.init)
        default: return []
        }
    }

    /// A string or a list of strings (`aud`).
    static func strings(_ value: JSONValue?) -> [String] {
        switch value {
        case .string(let text)?: [text]
        case .array(let items)?: items.compactMap(\.stringValue)
        default: []
        }
    }
}
