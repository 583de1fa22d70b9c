/// `sessions.dpop:`: how sessions are bound to a key the client holds (DPoP, RFC 9449).
public struct DPoPPolicy: Sendable, Equatable {
    /// When a session is bound.
    public enum Mode: String, Sendable, CaseIterable {
        /// A session is bound when the client sends a proof with its sign-in (the default).
        case optional
        /// Every session a native client signs in for must be bound: a sign-in without a proof is refused.
        case required
        /// Proofs are ignored at sign-in; no new session is bound.
        case off
    }

    /// Where a proof's `jti` is recorded so that it is accepted once.
    public enum Replay: String, Sendable, CaseIterable {
        /// In the session store, shared by every instance (the default): a proof is accepted once anywhere.
        case store
        /// In this process's memory, with nonces that name the process (RFC 9449 §8-9): a proof is accepted only
        /// by the instance that issued its nonce, and only until that instance restarts; no store write per request.
        case instance
    }

    public var mode: Mode
    /// A proof's `iat` may be this old (plus ``clockSkewSeconds``).
    public var maxAgeSeconds: Int
    /// Proofs must carry a nonce the gateway issued (`DPoP-Nonce`, RFC 9449 §8).
    public var requireNonce: Bool
    /// A nonce is accepted this long after the gateway issued it.
    public var nonceLifetimeSeconds: Int
    public var replay: Replay

    /// Whether proofs must carry a nonce: `require_nonce`, or implied by `replay: instance`.
    public var requiresNonce: Bool { requireNonce || replay == .instance }

    /// Clocks of client and gateway may differ by this much (a proof from up to this far in the future passes).
    public static let clockSkewSeconds = 5
    /// The signature algorithms a proof may use (RFC 9449 §4.3 step 6: never `none`, never a MAC).
    public static let algorithms = ["ES256", "RS256", "PS256", "EdDSA"]

    public init(
        mode: Mode = .optional, maxAgeSeconds: Int = 60, requireNonce: Bool = false, nonceLifetimeSeconds: Int = 300, replay: Replay = .store
    ) {
        self.mode = mode
        self.maxAgeSeconds = maxAgeSeconds
        self.requireNonce = requireNonce
        self.nonceLifetimeSeconds = nonceLifetimeSeconds
        self.replay = replay
    }
}
