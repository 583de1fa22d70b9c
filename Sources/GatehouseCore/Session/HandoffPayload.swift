/// What a handoff code carries until the client redeems it (sealed in the store).
public struct HandoffPayload: Sendable, Codable, Equatable {
    public var provider: String
    public var clientRedirectURI: String
    public var clientCodeChallenge: String
    public var result: LoginResult

    public init(provider: String, clientRedirectURI: String, clientCodeChallenge: String, result: LoginResult) {
        self.provider = provider
        self.clientRedirectURI = clientRedirectURI
        self.clientCodeChallenge = clientCodeChallenge
        self.result = result
    }
}
