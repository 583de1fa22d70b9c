import Foundation
import GatehouseCore

/// The stand-in SPiD server's codes and tokens, plus the switches tests flip.
///
/// Each sign-in is a *grant*; its code, access tokens and refresh token point at it, so a replayed code or
/// an API logout can take down what came from the same sign-in.
actor StandInSPiDState {
    struct IssuedCode: Sendable {
        var clientID: String
        var redirectURI: String
        /// nil when the login request sent no PKCE challenge.
        var codeChallenge: String?
        var email: String
        var expiresAt: Date
        var grantID: String
        var redeemed: Bool
    }

    struct AccessTokenRecord: Sendable {
        var email: String
        var expiresAt: Date
        var grantID: String
    }

    struct RefreshTokenRecord: Sendable {
        var email: String
        var clientID: String
        var grantID: String
    }

    private let configuration: StandInSPiDServer.Configuration
    private var codes: [String: IssuedCode] = [:]
    private var accessTokens: [String: AccessTokenRecord] = [:]
    private var refreshTokens: [String: RefreshTokenRecord] = [:]

    private(set) var isUnavailable = false
    private(set) var tokenDelay: Duration = .zero

    private var logins = 0
    private var tokenRequests: [String: Int] = [:]
    private var failedTokenRequests = 0
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
        let code = Self.hexToken()
        codes[code] = IssuedCode(
            clientID: clientID,
            redirectURI: redirectURI,
            codeChallenge: codeChallenge,
            email: email,
            expiresAt: Date().addingTimeInterval(TimeInterval(configuration.codeLifetime)),
            grantID: Self.hexToken(),
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
            return .failure(.invalidGrant("the authorization code was already used"))
        }
        guard issued.clientID == clientID else {
            return .failure(.invalidGrant("the authorization code was issued to another client"))
        }
        guard redirectURI == issued.redirectURI else {
            return .failure(.invalidGrant("redirect_uri does not match the login request"))
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
        issued.redeemed = true
        codes[code] = issued
        let refreshToken = Self.hexToken()
        refreshTokens[refreshToken] = RefreshTokenRecord(email: issued.email, clientID: clientID, grantID: issued.grantID)
        return .success(tokenResponse(email: issued.email, grantID: issued.grantID, refreshToken: refreshToken))
    }

    /// `grant_type=refresh_token`: rotates the refresh token only when configured to.
    func refresh(refreshToken: String, clientID: String) -> Result<[String: JSONValue], OAuthError> {
        guard let record = refreshTokens[refreshToken] else {
            return .failure(.invalidGrant("the refresh token is unknown, used or revoked"))
        }
        guard record.clientID == clientID else {
            return .failure(.invalidGrant("the refresh token was issued to another client"))
        }
        var returned = refreshToken
        if configuration.rotateRefreshTokens {
            refreshTokens[refreshToken] = nil
            returned = Self.hexToken()
            refreshTokens[returned] = record
        }
        return .success(tokenResponse(email: record.email, grantID: record.grantID, refreshToken: returned))
    }

    /// The SPiD token response: `user_id` as a string, `server_time` from the skewed clock, no `token_type`.
    private func tokenResponse(email: String, grantID: String, refreshToken: String) -> [String: JSONValue] {
        let accessToken = Self.hexToken()
        let now = Date()
        accessTokens[accessToken] = AccessTokenRecord(
            email: email,
            expiresAt: now.addingTimeInterval(TimeInterval(configuration.accessTokenLifetime)),
            grantID: grantID
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
        guard let record = accessTokens[accessToken], record.expiresAt > Date() else { return nil }
        apiRequests += 1
        return record
    }

    /// `/api/2/logout`: "invalidates the provided oauth token and refresh token it is tied to".
    func logout(accessToken: String) {
        guard let record = accessTokens.removeValue(forKey: accessToken) else { return }
        refreshTokens = refreshTokens.filter { $0.value.grantID != record.grantID }
        apiLogouts += 1
    }

    private func revokeGrant(_ grantID: String) {
        refreshTokens = refreshTokens.filter { $0.value.grantID != grantID }
        accessTokens = accessTokens.filter { $0.value.grantID != grantID }
    }

    // MARK: Counters

    func recordTokenRequest(grantType: String) {
        tokenRequests[grantType, default: 0] += 1
    }

    func recordTokenFailure() {
        failedTokenRequests += 1
    }

    func recordClientAuthentication(_ method: StandInSPiDServer.ClientAuthentication) {
        lastClientAuthentication = method
    }

    func recordBrowserLogout() {
        browserLogouts += 1
    }

    func stats() -> StandInSPiDServer.Stats {
        let now = Date()
        return StandInSPiDServer.Stats(
            logins: logins,
            tokenRequests: tokenRequests,
            failedTokenRequests: failedTokenRequests,
            apiRequests: apiRequests,
            apiLogouts: apiLogouts,
            browserLogouts: browserLogouts,
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
