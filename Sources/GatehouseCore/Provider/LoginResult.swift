/// What a successful login yields: who the user is and what the gateway may act with.
public struct LoginResult: Sendable, Codable, Equatable {
    public var identity: Identity
    public var credential: Credential

    public init(identity: Identity, credential: Credential) {
        self.identity = identity
        self.credential = credential
    }
}
