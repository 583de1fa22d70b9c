import GatehouseCore

/// The one decision of a `/v1/api/{path…}` request, once its credential has been looked at: the event-loop
/// relay and the router both ask it, with the same front-end-neutral facts, and carry out its verdict — the
/// upstream request target to forward to, or the refusal to answer with.
///
/// In order (the router's order since the access rules landed, now the relay's too):
/// 1. no session, and no rule lets anyone in: the credential's refusal (or 401 `invalid_session`), before
///    the path is read;
/// 2. a path that does not normalize (``NormalizedPath``): 400 `invalid_path`;
/// 3. the access rules on the normalized path (``AccessDecision/refusal(sessionRefusal:)``);
/// 4. forward to `basePath` + the normalized path + the query.
///
/// Pure and synchronous: table-tested without sockets (`APIDecisionTests`).
struct APIDecision: Sendable {
    /// What the request asks, whatever front end received it.
    struct Facts: Sendable {
        /// Upper case.
        var method: String
        /// The raw (still percent-encoded) path below `/v1/api`: `/x/y` of `/v1/api/x/y`.
        var path: Substring
        /// The raw query, without `?`; `nil` when the target has none.
        var query: Substring?
    }

    /// What to do with it.
    enum Verdict: Sendable {
        /// Send the request to the backend at `target` (origin-form: the base path, the normalized path, the
        /// query), as `session` (`nil`: a path the rules open to anyone, with no identity).
        case forward(target: String, session: ActiveSession?)
        /// Answer with this error (a ``GatehouseError`` the one error mapping renders, or what the credential's
        /// look-up threw).
        case refuse(any Error)
    }

    /// The verdict, and the access policy's decision when the rules were consulted (for the audit line:
    /// ``AccessDecision/audit(session:method:path:via:metrics:logger:)``, with the path judged).
    /// - Parameters:
    ///   - session: the session the credential gave; `nil` when none was presented or it was refused.
    ///   - sessionRefusal: why the presented credential gave no session (`nil`: none was presented).
    ///   - basePath: the backend URL's path without a trailing slash (``UpstreamPath/split(_:)``).
    static func decide(
        _ facts: Facts, session: ActiveSession?, sessionRefusal: (any Error)?, policy: AccessPolicy, basePath: String
    ) -> (verdict: Verdict, access: (decision: AccessDecision, path: NormalizedPath)?) {
        // Unless some rule lets anyone in, a request without a session ends here, before its path is read.
        if session == nil, !policy.hasAnonymousRules {
            return (.refuse(sessionRefusal ?? GatehouseError.invalidSession()), nil)
        }
        // Plain characters only, no empty or dot segments: the raw segments are the decoded ones, and the
        // target is the raw path (the common case, without splitting or re-encoding).
        // Without rules (and the default fallback) every session reaches everything: nothing to judge.
        let judged = !policy.isOpenToSessions
        if let plain = UpstreamPath.plainTarget(basePath: basePath, path: facts.path, query: facts.query) {
            guard judged else { return (.forward(target: plain, session: session), nil) }
            let segments = facts.path.split(separator: "/")
            let path = NormalizedPath(segments: segments.map(String.init), trailingSlash: facts.path.hasSuffix("/"))
            return judge(facts, path: path, segments: segments, target: plain, session: session, sessionRefusal: sessionRefusal, policy: policy)
        }
        let path: NormalizedPath
        do {
            path = try NormalizedPath(raw: facts.path)
        } catch {
            return (.refuse(error.problem), nil)
        }
        let target = UpstreamPath.target(basePath: basePath, path: path, query: facts.query)
        guard judged else { return (.forward(target: target, session: session), nil) }
        return judge(facts, path: path, segments: path.segments.map { Substring($0) }, target: target, session: session, sessionRefusal: sessionRefusal, policy: policy)
    }

    private static func judge(
        _ facts: Facts, path: NormalizedPath, segments: [Substring], target: String, session: ActiveSession?, sessionRefusal: (any Error)?,
        policy: AccessPolicy
    ) -> (verdict: Verdict, access: (decision: AccessDecision, path: NormalizedPath)?) {
        let user = session.map { (provider: $0.provider, identity: $0.identity) }
        let decision = policy.decide(method: facts.method, path: segments, user: user)
        if let refusal = decision.refusal(sessionRefusal: sessionRefusal) { return (.refuse(refusal), (decision, path)) }
        return (.forward(target: target, session: session), (decision, path))
    }
}
