public import Foundation

/// One device sign-in (RFC 8628), from `POST /v1/device/authorize` to the token call that takes its session.
/// Sealed in the store as the payload of a ``PendingRecord`` of purpose ``PendingRecord/Purpose/deviceAuthorization``,
/// keyed by the SHA-256 of the device code; its user code has a record of its own pointing here. Any instance
/// serves any step: every change is a compare-and-swap of the sealed payload, and the one use of an approved
/// code is the store's single-use consumption (``SessionStore/consumePending(keyHash:purpose:now:)``).
///
/// No session token is ever kept: approval stores the login's result (identity and provider credential,
/// sealed with the credential sealing key as a session's credential is), and the session is created only
/// by the token call that consumes the code, whose answer is the only place its token appears.
public struct DeviceAuthorization: Sendable, Codable, Equatable {
    /// Where the sign-in stands. Consumed is the store's mark on the record, not a state here.
    public enum State: String, Sendable, Codable {
        case pending, approved, denied
    }

    /// What a poll of the token endpoint answers (RFC 8628 §3.5).
    public enum PollOutcome: Sendable, Equatable {
        case authorizationPending
        /// Polled sooner than the interval; the interval has grown by 5 seconds.
        case slowDown
        case accessDenied
        case expiredToken
        /// Approved: the login's result and its provider, for the session the token call creates.
        case approved(LoginResult, provider: String)
    }

    /// RFC 8628 §3.5: each `slow_down` adds 5 seconds to the interval.
    public static let slowDownStep = 5

    public var userCodeHash: String
    public var state: State
    /// The provider the device asked for; nil lets the person choose.
    public var provider: String?
    /// RFC 7638 thumbprint of the key of the authorize call's DPoP proof: the session is bound to it.
    public var dpopThumbprint: String?
    /// The address the authorize call came from and when, shown on the confirmation page.
    public var clientAddress: String
    public var requestedAt: Date
    public var expiresAt: Date
    /// Seconds the device must wait between polls.
    public var interval: Int
    public var lastPolledAt: Date?
    /// Once approved: what the person's login produced.
    public var result: LoginResult?
    /// Once approved: the provider the person signed in with.
    public var signedInProvider: String?

    public init(
        userCodeHash: String, provider: String?, dpopThumbprint: String?, clientAddress: String, requestedAt: Date, lifetime: TimeInterval,
        interval: Int
    ) {
        self.userCodeHash = userCodeHash
        self.state = .pending
        self.provider = provider
        self.dpopThumbprint = dpopThumbprint
        self.clientAddress = clientAddress
        self.requestedAt = requestedAt
        self.expiresAt = requestedAt.addingTimeInterval(lifetime)
        self.interval = interval
    }

    public func isExpired(at now: Date) -> Bool { now >= expiresAt }

    /// A poll at `now`: records it, grows the interval when it came too soon, and says what to answer.
    public mutating func poll(at now: Date) -> PollOutcome {
        if isExpired(at: now) { return .expiredToken }
        let previous = lastPolledAt
        lastPolledAt = now
        switch state {
        case .denied:
            return .accessDenied
        case .approved:
            guard let result, let signedInProvider else { return .accessDenied }
            return .approved(result, provider: signedInProvider)
        case .pending:
            if let previous, now.timeIntervalSince(previous) < TimeInterval(interval) {
                interval += Self.slowDownStep
                return .slowDown
            }
            return .authorizationPending
        }
    }

    /// The person signed in with `provider`: the device may take its session. Only a pending sign-in can be approved.
    public mutating func approve(_ result: LoginResult, provider: String, at now: Date) -> Bool {
        guard state == .pending, !isExpired(at: now) else { return false }
        state = .approved
        self.result = result
        signedInProvider = provider
        return true
    }

    /// The person refused. Only a pending sign-in can be denied.
    public mutating func deny(at now: Date) -> Bool {
        guard state == .pending, !isExpired(at: now) else { return false }
        state = .denied
        return true
    }
}
