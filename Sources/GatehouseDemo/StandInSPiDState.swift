import Foundation
import GatehouseCore

/// The stand-in SPiD server's state: codes, tokens, switches and token counters in ``ledger``, plus its
/// sign-in, API and logout counters.
///
/// Each sign-in is a *grant*; its code, access tokens and refresh token point at it, so a replayed code or
/// an API logout can take down what came from the same sign-in.
actor StandInSPiDState: StandInTokenState {
    /// An access token; its subject is the e-mail address it was issued for.
    typealias AccessTokenRecord = StandInTokenLedger<String>.AccessToken

    private let configuration: StandInSPiDServer.Configuration
    /// Codes and tokens speak for an e-mail address.
    var ledger = StandInTokenLedger<String> { StandInSPiDState.hexToken() }

    private var logins = 0
    private var apiRequests = 0
    private var apiLogouts = 0
    private var browserLogouts = 0
    private var lastClientAuthentication: StandInSPiDServer.ClientAuthentication?

    init(configuration: StandInSPiDServer.Configuration) {
        self.configuration = configuration
    }

    /// 20 random bytes as 40 lowercase hex characters, the shape of SPiD's codes and tokens.
    static func hexToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(40)
        for _ in 0..<20 {
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    // MARK: Authorization codes

    /// Records a sign-in and returns its one-time code.
    func issueCode(clientID: String, redirectURI: String, codeChallenge: String?, email: String) -> String {
        logins += 1
        return ledger.issueCode(
            clientID: clientID,
            redirectURI: redirectURI,
            codeChallenge: codeChallenge,
            subject: email,
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.codeLifetime))
        )
    }

    /// `grant_type=authorization_code`: single use, bound to client, redirect URI and PKCE challenge.
    func redeem(code: String, clientID: String, redirectURI: String?, codeVerifier: String?) -> Result<[String: JSONValue], OAuthError> {
        let issued: StandInTokenLedger<String>.Code
        switch ledger.checkCode(
            code,
            clientID: clientID,
            redirectURI: redirectURI,
            replayDescription: "the authorization code was already used",
            requestName: "login request"
        ) {
        case .failure(let error): return .failure(error)
        case .success(let checked): issued = checked
        }
        let verifier = codeVerifier.flatMap { $0.isEmpty ? nil : $0 }
        if let challenge = issued.codeChallenge {
            guard let verifier, PKCE.verify(verifier, against: challenge) else {
                return .failure(.invalidGrant("the code_verifier does not match the code_challenge"))
            }
        } else if verifier != nil {
            // RFC 9700 §2.1.1: a verifier without a challenge is refused.
            return .failure(.invalidGrant("code_verifier was sent but the login request had no code_challenge"))
        }
        ledger.markRedeemed(code)
        let refreshToken = ledger.issueRefreshToken(subject: issued.subject, clientID: clientID, grantID: issued.grantID)
        return .success(tokenResponse(email: issued.subject, grantID: issued.grantID, refreshToken: refreshToken))
    }

    /// `grant_type=refresh_token`: rotates the refresh token only when configured to.
    func refresh(refreshToken: String, clientID: String) -> Result<[String: JSONValue], OAuthError> {
        guard let record = ledger.refreshToken(refreshToken) else {
            return .failure(.invalidGrant("the refresh token is unknown, used or revoked"))
        }
        guard record.clientID == clientID else {
            return .failure(.invalidGrant("the refresh token was issued to another client"))
        }
        var returned = refreshToken
        if configuration.rotateRefreshTokens, let rotated = ledger.rotateRefreshToken(refreshToken) {
            returned = rotated
        }
        return .success(tokenResponse(email: record.subject, grantID: record.grantID, refreshToken: returned))
    }

    /// The SPiD token response: `user_id` as a string, `server_time` from the skewed clock, no `token_type`.
    private func tokenResponse(email: String, grantID: String, refreshToken: String) -> [String: JSONValue] {
        let now = Date()
        let accessToken = ledger.issueAccessToken(
            subject: email,
            grantID: grantID,
            expiresAt: now.addingTimeInterval(TimeInterval(configuration.accessTokenLifetime))
        )
        let serverTime = Int(now.timeIntervalSince1970.rounded(.down)) + configuration.clockSkew
        return [
            "access_token": .string(accessToken),
            "expires_in": .number(Double(configuration.accessTokenLifetime)),
            "scope": .string(configuration.scope),
            "user_id": .string(configuration.users[email]?.userID ?? "0"),
            "is_admin": .bool(false),
            "refresh_token": .string(refreshToken),
            "server_time": .number(Double(serverTime)),
        ]
    }

    // MARK: API access and logout

    /// Checks an access token presented to `/api/2`; counts the request when it is valid.
    func authenticate(accessToken: String) -> AccessTokenRecord? {
        guard let record = ledger.accessToken(accessToken), record.expiresAt > Date() else { return nil }
        apiRequests += 1
        return record
    }

    /// `/api/2/logout`: "invalidates the provided oauth token and refresh token it is tied to".
    func logout(accessToken: String) {
        guard let record = ledger.removeAccessToken(accessToken) else { return }
        ledger.revokeRefreshTokens(ofGrant: record.grantID)
        apiLogouts += 1
    }

    // MARK: Counters

    func recordClientAuthentication(_ method: StandInSPiDServer.ClientAuthentication) {
        lastClientAuthentication = method
    }

    func recordBrowserLogout() {
        browserLogouts += 1
    }

    func stats() -> StandInSPiDServer.Stats {
        StandInSPiDServer.Stats(
            logins: logins,
            tokenRequests: ledger.tokenRequests,
            failedTokenRequests: ledger.failedTokenRequests,
            apiRequests: apiRequests,
            apiLogouts: apiLogouts,
            browserLogouts: browserLogouts,
            validAccessTokens: ledger.validAccessTokenCount(),
            validRefreshTokens: ledger.validRefreshTokenCount,
            lastClientAuthentication: lastClientAuthentication
        )
    }
}
