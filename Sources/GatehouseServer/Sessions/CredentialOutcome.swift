import GatehouseCore

/// What a request's credential gives: the input of every decision that needs to know who asks (``APIDecision``,
/// ``ForwardAuthDecision``), from either of ``SessionResolver``'s entry points, whatever front end received it.
enum CredentialOutcome: Sendable {
    /// None was presented.
    case none
    /// A session. `proof`: the DPoP proof presented with it, checked and not yet spent; whoever carries out the
    /// decision records it (``SessionResolver/spend(_:)``) before anything goes on, and a replay voids the decision.
    case session(ActiveSession, proof: DPoPProof?)
    /// One was presented and gives no session (unknown or ended, a scheme that is not ours, a cookie without
    /// `X-CSRF`, a proof that fails): why. The rules may still open the path to anyone.
    case refused(any Error)

    var session: ActiveSession? {
        if case .session(let session, _) = self { return session }
        return nil
    }

    /// Why the presented credential gave no session; `nil` when it gave one or none was presented.
    var refusal: (any Error)? {
        if case .refused(let error) = self { return error }
        return nil
    }

    /// The proof to spend; `nil` without one.
    var proof: DPoPProof? {
        if case .session(_, let proof) = self { return proof }
        return nil
    }
}
