public import Foundation

/// A short-lived, single-use record keyed by the hash of a secret: a login transaction (key = hash of the
/// gateway's `state`), a handoff code (key = hash of the code) or a page login's state (key = hash of the
/// login id; its payload is replaced as the login proceeds). The payload is sealed by the caller.
public struct PendingRecord: Sendable, Equatable {
    /// What the record is for; a state can never be redeemed as a handoff code.
    public enum Purpose: String, Sendable {
        case loginTransaction = "login"
        case handoffCode = "handoff"
        /// A page login in progress (`acs`, `capture`): its transaction and the provider's cookie jars,
        /// updated with ``SessionStore/replacePendingPayload(keyHash:purpose:expected:with:now:)``.
        case pageLogin = "page"
        /// A device sign-in (``DeviceAuthorization``), keyed by the hash of its device code; consumed once
        /// when the device takes its session. Kept in the same table: no schema change was needed.
        case deviceAuthorization = "device"
        /// A device sign-in's user code (key: ``UserCode/hash(_:)``), whose payload is the device code's hash.
        case deviceUserCode = "device_user"
    }

    public var keyHash: String
    public var purpose: Purpose
    /// The provider the record belongs to.
    public var provider: String
    /// For handoff codes: the session created when the code is first redeemed (revoked on replay).
    public var sessionID: String?
    public var payload: Data
    public var expiresAt: Date

    public init(keyHash: String, purpose: Purpose, provider: String, sessionID: String? = nil, payload: Data, expiresAt: Date) {
        self.keyHash = keyHash
        self.purpose = purpose
        self.provider = provider
        self.sessionID = sessionID
        self.payload = payload
        self.expiresAt = expiresAt
    }
}
