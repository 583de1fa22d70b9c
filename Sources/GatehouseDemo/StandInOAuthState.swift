import Foundation
import GatehouseCore

/// The authorization server's grants, codes and tokens, plus the switches tests flip.
///
/// Each approval is a *grant*; codes, access tokens and refresh tokens point at their grant, so a replayed
/// code or a revoked refresh token can take down everything that came from the same approval.
actor StandInOAuthState {
    struct IssuedCode: Sendable {
        var clientID: String
        var redirectURI: String
        var codeChallenge: String
        var username: String
        var scope: [String]
        var expiresAt: Date
        var grantID: String
        var redeemed: Bool
    }

    struct AccessTokenRecord: Sendable {
        var username: String
        var scope: [String]
        var expiresAt: Date
        var grantID: String
    }

    struct RefreshTokenRecord: Sendable {
        var username: String
        var scope: [String]
        var clientID: String
        var grantID: String
    }

    private let configuration: StandInOAuthServer.Configuration
    private var codes: [String: IssuedCode] = [:]
    private var accessTokens: [String: AccessTokenRecord] = [:]
    private var refreshTokens: [String: RefreshTokenRecord] = [:]

    private(set) var isUnavailable = false
    private(set) var tokenDelay: Duration = .zero

    private var tokenRequests: [String: Int] = [:]
    private var failedTokenRequests = 0
    private var revocationRequests = 0
    private var userinfoRequests = 0
    private var apiRequests = 0
    private var lastClientAuthentication: StandInOAuthServer.ClientAuthentication?

    init(configuration: StandInOAuthServer.Configuration) {
        self.configuration = configuration
    }

    // MARK: Authorization codes

    /// Records an approval and returns its one-time code.
    func issueCode(clientID: String, redirectURI: String, codeChallenge: String, username: String, scope: [String]) -> String {
        let code = RandomToken.make(byteCount: 24)
        codes[code] = IssuedCode(
            clientID: clientID,
            redirectURI: redirectURI,
            codeChallenge: codeChallenge,
            username: username,
            scope: scope,
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.codeLifetime)),
            grantID: RandomToken.make(byteCount: 16),
            redeemed: false
        )
        return code
    }

    /// `grant_type=authorization_code`: single use, bound to client, redirect URI and PKCE challenge.
    func redeem(code: String, clientID: String, redirectURI: String?, codeVerifier: String?) -> Result<[String: JSONValue], OAuthError> {
        guard var issued = codes[code], issued.expiresAt > Date() else {
            return .failure(.invalidGrant("the authorization code is unknown or expired"))
        }
        guard !issued.redeemed else {
            // RFC 6749 §4.1.2: a replayed code revokes what the first redemption issued.
            revokeGrant(issued.grantID)
            return .failure(.invalidGrant("this grant was already used"))
        }
        guard issued.clientID == clientID else {
            return .failure(.invalidGrant("the authorization code was issued to another client"))
        }
        guard redirectURI == issued.redirectURI else {
            return .failure(.invalidGrant("redirect_uri does not match the authorization request"))
        }
        guard let codeVerifier, PKCE.verify(codeVerifier, against: issued.codeChallenge) else {
            return .failure(.invalidGrant("the code_verifier does not match the code_challenge"))
        }
        issued.redeemed = true
        codes[code] = issued
        let refreshToken = RandomToken.make(byteCount: 24)
        refreshTokens[refreshToken] = RefreshTokenRecord(
            username: issued.username,
            scope: issued.scope,
            clientID: clientID,
            grantID: issued.grantID
        )
        return .success(tokenResponse(username: issued.username, scope: issued.scope, grantID: issued.grantID, refreshToken: refreshToken))
    }

    /// `grant_type=refresh_token`: rotates the refresh token unless rotation is off.
    func refresh(refreshToken: String, clientID: String, requestedScope: [String]?) -> Result<[String: JSONValue], OAuthError> {
        guard let record = refreshTokens[refreshToken] else {
            return .failure(.invalidGrant("the refresh token is unknown, used or revoked"))
        }
        guard record.clientID == clientID else {
            return .failure(.invalidGrant("the refresh token was issued to another client"))
        }
        var scope = record.scope
        if let requestedScope {
            guard requestedScope.allSatisfy(record.scope.contains) else {
                return .failure(.invalidScope("the requested scope exceeds the granted scope"))
            }
            scope = requestedScope
        }
        var newRefreshToken: String?
        if configuration.rotateRefreshTokens {
            refreshTokens[refreshToken] = nil
            let rotated = RandomToken.make(byteCount: 24)
            refreshTokens[rotated] = record
            newRefreshToken = rotated
        }
        return .success(tokenResponse(username: record.username, scope: scope, grantID: record.grantID, refreshToken: newRefreshToken))
    }

    private func tokenResponse(username: String, scope: [String], grantID: String, refreshToken: String?) -> [String: JSONValue] {
        let accessToken = RandomToken.make(byteCount: 24)
        accessTokens[accessToken] = AccessTokenRecord(
            username: username,
            scope: scope,
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.accessTokenLifetime)),
            grantID: grantID
        )
        var body: [String: JSONValue] = [
            "access_token": .string(accessToken),
            "token_type": .string("bearer"),
            "expires_in": .number(Double(configuration.accessTokenLifetime)),
            "scope": .string(scope.joined(separator: " ")),
        ]
        if let refreshToken { body["refresh_token"] = .string(refreshToken) }
        return body
    }

    // MARK: Revocation and resource access

    /// RFC 7009: unknown tokens are not an error; a refresh token takes its grant's access tokens along.
    func revoke(token: String, hint: String?) {
        revocationRequests += 1
        let refreshFirst = hint != "access_token"
        if refreshFirst, let record = refreshTokens[token] {
            revokeGrant(record.grantID)
        } else if accessTokens.removeValue(forKey: token) == nil, let record = refreshTokens[token] {
            revokeGrant(record.grantID)
        }
    }

    private func revokeGrant(_ grantID: String) {
        refreshTokens = refreshTokens.filter { $0.value.grantID != grantID }
        accessTokens = accessTokens.filter { $0.value.grantID != grantID }
    }

    /// Checks a bearer token for the userinfo and API endpoints.
    func authenticate(accessToken: String, requiredScope: String?) -> Result<AccessTokenRecord, OAuthError> {
        guard let record = accessTokens[accessToken] else {
            return .failure(.invalidToken("the access token is unknown or revoked"))
        }
        guard record.expiresAt > Date() else {
            return .failure(.invalidToken("the access token expired"))
        }
        if let requiredScope, !record.scope.contains(requiredScope) {
            return .failure(.insufficientScope("the access token lacks the \(requiredScope) scope"))
        }
        return .success(record)
    }

    // MARK: Counters

    func recordTokenRequest(grantType: String) {
        tokenRequests[grantType, default: 0] += 1
    }

    func recordTokenFailure() {
        failedTokenRequests += 1
    }

    func recordClientAuthentication(_ method: StandInOAuthServer.ClientAuthentication) {
        lastClientAuthentication = method
    }

    func recordUserinfoRequest() {
        userinfoRequests += 1
    }

    func recordAPIRequest() {
        apiRequests += 1
    }

    func stats() -> StandInOAuthServer.Stats {
        let now = Date()
        return StandInOAuthServer.Stats(
            tokenRequests: tokenRequests,
            failedTokenRequests: failedTokenRequests,
            revocationRequests: revocationRequests,
            userinfoRequests: userinfoRequests,
            apiRequests: apiRequests,
            validAccessTokens: accessTokens.values.filter { $0.expiresAt > now }.count,
            validRefreshTokens: refreshTokens.count,
            lastClientAuthentication: lastClientAuthentication
        )
    }

    // MARK: Test switches

    func setUnavailable(_ unavailable: Bool) {
        isUnavailable = unavailable
    }

    func setTokenDelay(_ delay: Duration) {
        tokenDelay = delay
    }

    func revokeAllRefreshTokens() {
        refreshTokens.removeAll()
    }

    func expireAllAccessTokens() {
        let past = Date(timeIntervalSinceNow: -1)
        for token in accessTokens.keys { accessTokens[token]?.expiresAt = past }
    }
}
