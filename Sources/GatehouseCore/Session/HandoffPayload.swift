public import Foundation

/// What a handoff code carries until the client redeems it (sealed in the store).
public struct HandoffPayload: Sendable, Codable, Equatable {
    public var provider: String
    public var clientRedirectURI: String
    public var clientCodeChallenge: String
    public var result: LoginResult
    /// The end of the code's validity. The store keeps the record longer, to recognise replays.
    public var expiresAt: Date

    public init(provider: String, clientRedirectURI: String, clientCodeChallenge: String, result: LoginResult, expiresAt: Date) {
        self.provider = provider
        self.clientRedirectURI = clientRedirectURI
        self.clientCodeChallenge = clientCodeChallenge
        self.result = result
        self.expiresAt = expiresAt
    }
}
