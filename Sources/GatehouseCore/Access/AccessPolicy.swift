public import Foundation

/// Who may sign in, and who may reach which backend path (`access:` in `gatehouse.yaml`). Without an
/// `access` section every signed-in user reaches the whole backend.
///
/// ``decide(method:path:host:user:)`` is synchronous and allocation-free for the event-loop relay; it judges
/// the normalized, decoded path segments — the path that is forwarded.
public struct AccessPolicy: Sendable, Equatable {
    /// What applies when no rule matches.
    public enum Fallback: String, Sendable, Equatable {
        case deny
        case authenticated
    }

    /// `access.login`: a login must meet ANY of these; empty lets in anyone the provider vouches for.
    public var login: [AccessCondition]
    public var rules: [AccessRule]
    public var fallback: Fallback
    /// `access.return_to_origins`: exact origins (`https://app.example.com`) a browser login may return to
    /// besides the gateway's own paths (forward authentication: the application's host).
    public var returnToOrigins: [String]

    public init(login: [AccessCondition] = [], rules: [AccessRule] = [], fallback: Fallback = .authenticated, returnToOrigins: [String] = []) {
        self.login = login
        self.rules = rules
        self.fallback = fallback
        self.returnToOrigins = returnToOrigins
    }

    /// Whether a browser login may end at the absolute URL `target`: http(s), no user info, no control
    /// characters or backslashes, and its origin exactly one of ``returnToOrigins``.
    public func allowsReturn(to target: String) -> Bool {
        guard !returnToOrigins.isEmpty, !target.contains("\\"), !target.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7f }),
            let origin = WebOrigin.of(target)
        else { return false }
        return returnToOrigins.contains { WebOrigin.of($0) == origin }
    }

    /// No rules and the default fallback: every request needs a session and nothing more (the behaviour
    /// without an `access` section), so the path need not be judged.
    public var isOpenToSessions: Bool { rules.isEmpty && fallback == .authenticated }

    /// Whether some rule names hosts (`hosts:`): only then is a request's host worth reading.
    public var namesHosts: Bool { rules.contains { $0.hosts != nil } }

    /// Whether some rule lets requests through without a session.
    public var hasAnonymousRules: Bool { rules.contains { $0.allow == .anyone } }

    /// The decision for a request; `host` is the host the request is for (``HostPattern/normalized(_:)``; `nil`
    /// when it has none: no rule with `hosts` applies), `user` the session's provider and identity, `nil` without
    /// a session; `authentication` how the session authenticated, judged at `now` by a rule's `require` (both
    /// evaluated only for such a rule).
    public func decide(
        method: String, path: [Substring], host: String? = nil, user: (provider: String, identity: Identity)?,
        authentication: @autoclosure () -> AccessAuthentication? = nil, now: @autoclosure () -> Date = Date()
    ) -> AccessDecision {
        guard let rule = rules.first(where: { $0.applies(method: method, path: path, host: host) }) else {
            switch fallback {
            case .authenticated: return user == nil ? .needsSession : .allow(rule: nil)
            case .deny: return user == nil ? .needsSession : .deny(rule: "default")
            }
        }
        let decision: AccessDecision
        switch rule.allow {
        case .anyone:
            return .allow(rule: rule.name)
        case .authenticated:
            decision = user == nil ? .needsSession : .allow(rule: rule.name)
        case .conditions(let conditions):
            guard let user else { return .needsSession }
            decision =
                conditions.contains { $0.matches(provider: user.provider, identity: user.identity) }
                ? .allow(rule: rule.name) : .deny(rule: rule.name)
        }
        // Who may is decided first: a session the rule refuses is refused, not asked to sign in again.
        guard case .allow = decision, let requirement = rule.require else { return decision }
        // Read only here: most rules ask nothing of the authentication, and the relay decides on every request.
        guard let authentication = authentication(),
            requirement.isMet(acr: authentication.acr, authenticatedAt: authentication.authenticatedAt, now: now())
        else {
            return .stepUp(rule: rule.name, requirement: requirement)
        }
        return decision
    }

    /// Whether `access.login` lets this user sign in.
    public func permitsLogin(provider: String, identity: Identity) -> Bool {
        login.isEmpty || login.contains { $0.matches(provider: provider, identity: identity) }
    }
}
