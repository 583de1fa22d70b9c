public import Foundation

/// What a provider gave the gateway to act for the user. Sealed at rest, never shown to clients.
public struct Credential: Sendable, Codable, Equatable {
    public var accessToken: String
    /// As the provider wrote it (`bearer`, `Bearer`, …); compared case-insensitively.
    public var tokenType: String
    public var refreshToken: String?
    /// When the access token expires, if the provider said.
    public var expiresAt: Date?
    /// When the gateway received it; with ``expiresAt`` gives the lifetime for the refresh skew.
    public var issuedAt: Date
    public var scope: [String]
    /// Provider-specific fields worth keeping (SPiD's `user_id`, an `id_token`, …).
    public var extras: [String: String]
    /// The provider's clock minus the gateway's, in whole seconds, when the provider tells its time
    /// (SPiD's `server_time`); shown in the session view.
    public var clockSkewSeconds: Int?

    public init(
        accessToken: String, tokenType: String = "Bearer", refreshToken: String? = nil, expiresAt: Date? = nil,
        issuedAt: Date, scope: [String] = [], extras: [String: String] = [:], clockSkewSeconds: Int? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.scope = scope
        self.extras = extras
        self.clockSkewSeconds = clockSkewSeconds
    }

    public var isRefreshable: Bool { refreshToken != nil }
}
