public import Foundation

/// What a successful login yields: who the user is and what the gateway may act with.
public struct LoginResult: Sendable, Codable, Equatable {
    public var identity: Identity
    public var credential: Credential
    /// A provider-imposed cap on the session's lifetime (BrowserID: `session_lifetime_seconds`);
    /// the gateway's absolute lifetime applies when nil or longer.
    public var sessionLifetime: TimeInterval?

    public init(identity: Identity, credential: Credential, sessionLifetime: TimeInterval? = nil) {
        self.identity = identity
        self.credential = credential
        self.sessionLifetime = sessionLifetime
    }
}
