import GatehouseCore

/// A session resolved from a token: the stored record with its identity and credential opened.
struct ActiveSession: Sendable {
    var record: SessionRecord
    var identity: Identity
    var credential: Credential

    var id: String { record.id }
    var provider: String { record.provider }
}
