import GatehouseCore

/// A session resolved from a token: the stored record with its identity and credential opened — or, for a
/// provider-issued bearer token (``ProviderTokenAuthenticator``), one made for that request alone and never stored.
struct ActiveSession: Sendable {
    var record: SessionRecord
    var identity: Identity
    var credential: Credential
    /// What the request presented: a Gatehouse session, or a provider's own access token.
    var via: Via = .session

    var id: String { record.id }
    var provider: String { record.provider }

    /// How the identity came to the gateway.
    enum Via: Sendable, Equatable {
        /// A Gatehouse session (a login).
        case session
        /// A provider-issued access token presented as `Authorization: Bearer` (`bearer_tokens:`).
        case bearer
    }
}
