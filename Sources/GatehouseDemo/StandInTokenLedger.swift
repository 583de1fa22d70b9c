import Foundation

/// The authorization codes, access tokens and refresh tokens a stand-in authorization server has issued, its
/// token-endpoint counters and the switches tests flip: the bookkeeping the OAuth and SPiD stand-ins share.
///
/// Every code and token points at its *grant* (one approval or sign-in), so everything that came from the same
/// grant can be revoked together. `Subject` is what a token speaks for: a user and scope, an e-mail address, ….
struct StandInTokenLedger<Subject: Sendable>: Sendable {
    /// An issued authorization code.
    struct Code: Sendable {
        var clientID: String
        var redirectURI: String
        /// nil when the authorization request sent no PKCE challenge.
        var codeChallenge: String?
        var subject: Subject
        var expiresAt: Date
        var grantID: String
        var redeemed: Bool
    }

    /// An issued access token.
    struct AccessToken: Sendable {
        var subject: Subject
        var expiresAt: Date
        var grantID: String
    }

    /// An issued refresh token.
    struct RefreshToken: Sendable {
        var subject: Subject
        var clientID: String
        var grantID: String
    }

    /// Mints a fresh code or token string (each stand-in has its own shape).
    let makeToken: @Sendable () -> String
    private var codes: [String: Code] = [:]
    private var accessTokens: [String: AccessToken] = [:]
    private var refreshTokens: [String: RefreshToken] = [:]

    /// While on, the token endpoint and the APIs answer 503.
    var isUnavailable = false
    /// How long the token endpoint waits before answering.
    var tokenDelay: Duration = .zero
    /// Token-endpoint requests by `grant_type`, counted on arrival.
    private(set) var tokenRequests: [String: Int] = [:]
    /// Token-endpoint requests answered with an OAuth error.
    private(set) var failedTokenRequests = 0

    init(makeToken: @escaping @Sendable () -> String) {
        self.makeToken = makeToken
    }

    // MARK: Authorization codes

    /// Records an approval for `subject` as a new grant and returns its one-time code.
    mutating func issueCode(clientID: String, redirectURI: String, codeChallenge: String?, subject: Subject, expiresAt: Date) -> String {
        let code = makeToken()
        codes[code] = Code(
            clientID: clientID,
            redirectURI: redirectURI,
            codeChallenge: codeChallenge,
            subject: subject,
            expiresAt: expiresAt,
            grantID: makeToken(),
            redeemed: false
        )
        return code
    }

    /// The checks every redemption makes first: the code is known and unexpired, not used before (RFC 6749 §4.1.2:
    /// a replay revokes what the first redemption issued), issued to `clientID` and for `redirectURI`.
    /// The caller checks PKCE, then calls ``markRedeemed(_:)``.
    /// - Parameters:
    ///   - replayDescription: the `error_description` for a replayed code.
    ///   - requestName: what the redirect URI is compared with, for the `error_description`.
    mutating func checkCode(
        _ code: String,
        clientID: String,
        redirectURI: String?,
        replayDescription: String,
        requestName: String
    ) -> Result<Code, OAuthError> {
        guard let issued = codes[code], issued.expiresAt > Date() else {
            return .failure(.invalidGrant("the authorization code is unknown or expired"))
        }
        guard !issued.redeemed else {
            revokeGrant(issued.grantID)
            return .failure(.invalidGrant(replayDescription))
        }
        guard issued.clientID == clientID else {
            return .failure(.invalidGrant("the authorization code was issued to another client"))
        }
        guard redirectURI == issued.redirectURI else {
            return .failure(.invalidGrant("redirect_uri does not match the \(requestName)"))
        }
        return .success(issued)
    }

    /// Marks a code used: presenting it again revokes its grant.
    mutating func markRedeemed(_ code: String) {
        codes[code]?.redeemed = true
    }

    // MARK: Issuing tokens

    /// Files a new access token for `subject` under `grantID` and returns it.
    mutating func issueAccessToken(subject: Subject, grantID: String, expiresAt: Date) -> String {
        let token = makeToken()
        accessTokens[token] = AccessToken(subject: subject, expiresAt: expiresAt, grantID: grantID)
        return token
    }

    /// Files a new refresh token for `subject`, bound to `clientID`, under `grantID` and returns it.
    mutating func issueRefreshToken(subject: Subject, clientID: String, grantID: String) -> String {
        let token = makeToken()
        refreshTokens[token] = RefreshToken(subject: subject, clientID: clientID, grantID: grantID)
        return token
    }

    /// Replaces a known refresh token with a new one for the same grant and returns the new one.
    mutating func rotateRefreshToken(_ token: String) -> String? {
        guard let record = refreshTokens.removeValue(forKey: token) else { return nil }
        let rotated = makeToken()
        refreshTokens[rotated] = record
        return rotated
    }

    // MARK: Looking up and revoking

    /// The access token's record, expired or not; nil when unknown or revoked.
    func accessToken(_ token: String) -> AccessToken? {
        accessTokens[token]
    }

    /// The refresh token's record; nil when unknown, rotated away or revoked.
    func refreshToken(_ token: String) -> RefreshToken? {
        refreshTokens[token]
    }

    /// Forgets one access token and returns what it was.
    mutating func removeAccessToken(_ token: String) -> AccessToken? {
        accessTokens.removeValue(forKey: token)
    }

    /// Forgets every refresh token of `grantID`; its access tokens stay.
    mutating func revokeRefreshTokens(ofGrant grantID: String) {
        refreshTokens = refreshTokens.filter { $0.value.grantID != grantID }
    }

    /// Forgets every access and refresh token of `grantID`.
    mutating func revokeGrant(_ grantID: String) {
        revokeRefreshTokens(ofGrant: grantID)
        accessTokens = accessTokens.filter { $0.value.grantID != grantID }
    }

    /// Forgets every refresh token.
    mutating func revokeAllRefreshTokens() {
        refreshTokens.removeAll()
    }

    /// Expires every access token issued so far.
    mutating func expireAllAccessTokens() {
        let past = Date(timeIntervalSinceNow: -1)
        for token in accessTokens.keys { accessTokens[token]?.expiresAt = past }
    }

    // MARK: Counting

    /// Access tokens that are neither revoked nor expired at `now`.
    func validAccessTokenCount(at now: Date = Date()) -> Int {
        accessTokens.values.filter { $0.expiresAt > now }.count
    }

    /// Refresh tokens that would be accepted now.
    var validRefreshTokenCount: Int { refreshTokens.count }

    mutating func recordTokenRequest(grantType: String) {
        tokenRequests[grantType, default: 0] += 1
    }

    mutating func recordTokenFailure() {
        failedTokenRequests += 1
    }
}
