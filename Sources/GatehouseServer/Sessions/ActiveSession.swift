import GatehouseCore

/// A session resolved from a token: the stored record with its identity and credential opened — or, for a
/// provider-issued bearer token (``ProviderTokenAuthenticator``), one made for that request alone and never stored.
///
/// A class of constants: every relayed request hands its session from the memo to the decision, the plan and the
/// identity fields, and a reference is one retain where a copy was one per field of the record, the identity and
/// the credential. A changed session is a new one (``SessionManager/replaceCredential(of:with:)``).
final class ActiveSession: Sendable {
    let record: SessionRecord
    let identity: Identity
    let credential: Credential
    /// What the request presented: a Gatehouse session, or a provider's own access token.
    let via: Via

    init(record: SessionRecord, identity: Identity, credential: Credential, via: Via = .session) {
        self.record = record
        self.identity = identity
        self.credential = credential
        self.via = via
    }

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
