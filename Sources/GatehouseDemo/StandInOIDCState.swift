import Foundation

/// What the OIDC stand-in remembers: keys, codes, tokens, switches and counters.
struct StandInOIDCState: Sendable {
    struct Grant: Sendable {
        var user: String
        var nonce: String?
        var redirectURI: String
        var codeChallenge: String?
    }

    var signingKey = StandInOIDCSigningKey()
    /// Keys rotated out; still published until ``StandInOIDCProvider/rotateSigningKey(keepingOld:)`` drops them.
    var retiredKeys: [StandInOIDCSigningKey] = []
    var codes: [String: Grant] = [:]
    var refreshTokens: [String: Grant] = [:]
    var accessTokens: [String: String] = [:]
    var fault: StandInOIDCFault = .none
    var discoveryIssuer: String?
    var discoveryAvailable = true
    var discoveryFetches = 0
    var jwksFetches = 0
    var tokenRequests = 0
    var revocations = 0
    var lastLogoutHint: String?
}
