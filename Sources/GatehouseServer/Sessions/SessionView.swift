import Foundation
import GatehouseCore

/// The client's view of a session (`GET /v1/session`, `session` in 201 bodies). Never a provider token.
struct SessionView: Encodable, Sendable {
    struct IdentityView: Encodable, Sendable {
        var subject: String
        var email: String?
        var name: String?
        var groups: [String]
    }

    struct CredentialView: Encodable, Sendable {
        var refreshable: Bool
        var expiresAt: String?
        /// Provider clock minus gateway clock, when the provider tells its time (SPiD's `server_time`).
        var clockSkewSeconds: Int?
        enum CodingKeys: String, CodingKey {
            case refreshable
            case expiresAt = "expires_at"
            case clockSkewSeconds = "clock_skew_seconds"
        }
    }

    var id: String
    var provider: String
    var subject: String
    var identity: IdentityView
    var scope: [String]
    var createdAt: String
    var lastSeenAt: String
    var expiresAt: String
    var credential: CredentialView

    enum CodingKeys: String, CodingKey {
        case id, provider, subject, identity, scope, credential
        case createdAt = "created_at"
        case lastSeenAt = "last_seen_at"
        case expiresAt = "expires_at"
    }

    init(_ session: ActiveSession) {
        id = session.id
        provider = session.provider
        subject = session.identity.subject
        identity = IdentityView(
            subject: session.identity.subject, email: session.identity.email, name: session.identity.name, groups: session.identity.groups)
        scope = session.credential.scope
        createdAt = RFC3339.string(session.record.createdAt)
        lastSeenAt = RFC3339.string(session.record.lastSeenAt)
        expiresAt = RFC3339.string(session.record.expiresAt)
        credential = CredentialView(
            refreshable: session.credential.isRefreshable, expiresAt: session.credential.expiresAt.map(RFC3339.string),
            clockSkewSeconds: session.credential.clockSkewSeconds)
    }
}
