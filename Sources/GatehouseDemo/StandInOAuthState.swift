import Foundation
import GatehouseCore

/// The authorization server's state: codes, tokens, switches and token counters in ``ledger``, plus the
/// counters of its other endpoints.
///
/// Each approval is a *grant*; codes, access tokens and refresh tokens point at their grant, so a replayed
/// code or a revoked refresh token can take down everything that came from the same approval.
actor StandInOAuthState: StandInTokenState {
    /// What a code or token speaks for: a user and the scope granted.
    struct Grantee: Sendable {
        var username: String
        var scope: [String]
    }

    typealias AccessTokenRecord = StandInTokenLedger<Grantee>.AccessToken

    private let configuration: StandInOAuthServer.Configuration
    var ledger = StandInTokenLedger<Grantee> { RandomToken.make(byteCount: 24) }

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
        ledger.issueCode(
            clientID: clientID,
            redirectURI: redirectURI,
            codeChallenge: codeChallenge,
            subject: Grantee(username: username, scope: scope),
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.codeLifetime))
        )
    }

    /// `grant_type=authorization_code`: single use, bound to client, redirect URI and PKCE challenge.
    func redeem(code: String, clientID: String, redirectURI: String?, codeVerifier: String?) -> Result<[String: JSONValue], OAuthError> {
        let issued: StandInTokenLedger<Grantee>.Code
        switch ledger.checkCode(
            code,
            clientID: clientID,
            redirectURI: redirectURI,
            replayDescription: "this grant was already used",
            requestName: "authorization request"
        ) {
        case .failure(let error): return .failure(error)
        case .success(let checked): issued = checked
        }
        guard let codeVerifier, let challenge = issued.codeChallenge, PKCE.verify(codeVerifier, against: challenge) else {
            return .failure(.invalidGrant("the code_verifier does not match the code_challenge"))
        }
        ledger.markRedeemed(code)
        let refreshToken = ledger.issueRefreshToken(subject: issued.subject, clientID: clientID, grantID: issued.grantID)
        return .success(
            tokenResponse(username: issued.subject.username, scope: issued.subject.scope, grantID: issued.grantID, refreshToken: refreshToken))
    }

    /// `grant_type=refresh_token`: rotates the refresh token unless rotation is off.
    func refresh(refreshToken: String, clientID: String, requestedScope: [String]?) -> Result<[String: JSONValue], OAuthError> {
        guard let record = ledger.refreshToken(refreshToken) else {
            return .failure(.invalidGrant("the refresh token is unknown, used or revoked"))
        }
        guard record.clientID == clientID else {
            return .failure(.invalidGrant("the refresh token was issued to another client"))
        }
        var scope = record.subject.scope
        if let requestedScope {
            guard requestedScope.allSatisfy(record.subject.scope.contains) else {
                return .failure(.invalidScope("the requested scope exceeds the granted scope"))
            }
            scope = requestedScope
        }
        let newRefreshToken = configuration.rotateRefreshTokens ? ledger.rotateRefreshToken(refreshToken) : nil
        return .success(tokenResponse(username: record.subject.username, scope: scope, grantID: record.grantID, refreshToken: newRefreshToken))
    }

    private func tokenResponse(username: String, scope: [String], grantID: String, refreshToken: String?) -> [String: JSONValue] {
        let accessToken = ledger.issueAccessToken(
            subject: Grantee(username: username, scope: scope),
            grantID: grantID,
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.accessTokenLifetime))
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
        if refreshFirst, let record = ledger.refreshToken(token) {
            ledger.revokeGrant(record.grantID)
        } else if ledger.removeAccessToken(token) == nil, let record = ledger.refreshToken(token) {
            ledger.revokeGrant(record.grantID)
        }
    }

    /// Checks a bearer token for the userinfo and API endpoints.
    func authenticate(accessToken: String, requiredScope: String?) -> Result<AccessTokenRecord, OAuthError> {
        guard let record = ledger.accessToken(accessToken) else {
            return .failure(.invalidToken("the access token is unknown or revoked"))
        }
        guard record.expiresAt > Date() else {
            return .failure(.invalidToken("the access token expired"))
        }
        if let requiredScope, !record.subject.scope.contains(requiredScope) {
            return .failure(.insufficientScope("the access token lacks the \(requiredScope) scope"))
        }
        return .success(record)
    }

    // MARK: Counters

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
        StandInOAuthServer.Stats(
            tokenRequests: ledger.tokenRequests,
            failedTokenRequests: ledger.failedTokenRequests,
            revocationRequests: revocationRequests,
            userinfoRequests: userinfoRequests,
            apiRequests: apiRequests,
            validAccessTokens: ledger.validAccessTokenCount(),
            validRefreshTokens: ledger.validRefreshTokenCount,
            lastClientAuthentication: lastClientAuthentication
        )
    }
}
