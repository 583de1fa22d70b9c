public import Foundation

/// What a verified back-channel logout token names.
public struct LogoutToken: Sendable, Equatable {
    /// The token's id, accepted once (replays are refused).
    public var jti: String
    /// The provider's session to end, when named.
    public var sid: String?
    /// The subject, when named.
    public var subject: String?
    /// When it was issued; its `jti` need not be remembered after this plus the accepted skew.
    public var issuedAt: Date

    public init(jti: String, sid: String?, subject: String?, issuedAt: Date) {
        self.jti = jti
        self.sid = sid
        self.subject = subject
        self.issuedAt = issuedAt
    }

    /// The sessions it ends: by `sid` when named (of that subject too when named), else every session of the subject.
    public var match: ProviderSessionMatch? {
        if let sid { return .providerSession(sid: sid, subject: subject) }
        return subject.map { .subject($0) }
    }
}
