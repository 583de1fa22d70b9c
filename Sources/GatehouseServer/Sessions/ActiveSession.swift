import GatehouseCore

/// A session resolved from a token: the stored record with its identity and credential opened — or, for a
/// provider-issued bearer token (``ProviderTokenAuthenticator``), one made for that request alone and never stored.
///
/// A value, kept in one shared box of constants: every relayed request hands its session from the memo to the
/// decision, the plan and the identity fields, and a copy is one retain where it was one per field of the record,
/// the identity and the credential. Setting a part makes a new box, so a copy never sees another's change.
struct ActiveSession: Sendable {
    private final class Parts: Sendable {
        let record: SessionRecord
        let identity: Identity
        let credential: Credential
        let via: Via

        init(record: SessionRecord, identity: Identity, credential: Credential, via: Via) {
            self.record = record
            self.identity = identity
            self.credential = credential
            self.via = via
        }
    }

    private var parts: Parts

    init(record: SessionRecord, identity: Identity, credential: Credential, via: Via = .session) {
        parts = Parts(record: record, identity: identity, credential: credential, via: via)
    }

    var record: SessionRecord {
        get { parts.record }
        set { parts = Parts(record: newValue, identity: parts.identity, credential: parts.credential, via: parts.via) }
    }

    var identity: Identity {
        get { parts.identity }
        set { parts = Parts(record: parts.record, identity: newValue, credential: parts.credential, via: parts.via) }
    }

    var credential: Credential {
        get { parts.credential }
        set { parts = Parts(record: parts.record, identity: parts.identity, credential: newValue, via: parts.via) }
    }

    /// What the request presented: a Gatehouse session, or a provider's own access token.
    var via: Via {
        get { parts.via }
        set { parts = Parts(record: parts.record, identity: parts.identity, credential: parts.credential, via: newValue) }
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
