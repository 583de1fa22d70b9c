/// What the access policy says about one request.
public enum AccessDecision: Sendable, Equatable {
    /// Let it through (`rule`: the rule that decided, `nil` for the default).
    case allow(rule: String?)
    /// A session is needed and there is none: 401.
    case needsSession
    /// The session may not: 403 naming the rule (`default` when no rule matched).
    case deny(rule: String)
    /// The session may, once it has authenticated as the rule requires (``AccessRule/require``): 401 with the
    /// RFC 9470 challenge.
    case stepUp(rule: String, requirement: StepUpRequirement)
}
