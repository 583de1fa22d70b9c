import GatehouseConfiguration
import GatehouseCore

/// The one decision of a `/v1/api/{path…}` request, once its credential has been looked at: the event-loop
/// relay and the router both ask it, with the same front-end-neutral facts, and carry out its verdict — the
/// upstream and the request target to forward to, or the refusal to answer with.
///
/// In order (the router's order since the access rules landed, now the relay's too):
/// 1. no session, and no rule lets anyone in: the credential's refusal (or 401 `invalid_session`), before
///    the path is read;
/// 2. a path that does not normalize (``NormalizedPath``): 400 `invalid_path`;
/// 3. the upstream: the longest whole-segment prefix of the normalized path among `upstreams:`, else
///    `backend` (``UpstreamTable/route(_:)``);
/// 4. the access rules on the normalized path, prefix included, and the host (``AccessDecision/refusal(sessionRefusal:)``);
/// 5. forward to the upstream's base path + the normalized path (without the prefix unless `keep_prefix`) + the query.
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
        /// The host the request is for, as sent (`Host`, or a trusted proxy's `X-Forwarded-Host`): the rules
        /// with `hosts` compare it (``HostPattern/normalized(_:)``); `nil` when there is none.
        var host: String? = nil
    }

    /// What to do with it.
    enum Verdict: Sendable {
        /// Send the request upstream.
        case forward(Forward)
        /// Answer with this error (a ``GatehouseError`` the one error mapping renders, or what the credential's
        /// look-up threw).
        case refuse(any Error)
    }

    /// Where and as whom a request goes.
    struct Forward: Sendable {
        let upstream: UpstreamRoute
        /// Origin-form: the upstream's base path, the normalized path, the query.
        let target: String
        /// `nil`: a path the rules open to anyone, with no identity.
        let session: ActiveSession?

        /// The audience of the assertion the upstream receives; `nil` when it receives none (no session, or
        /// `assertion: false`). Signing it is the front end's effect.
        var audience: String? {
            session != nil && upstream.backend.assertion ? upstream.backend.audience : nil
        }
    }

    /// The decision as data: what a front end carries out for a request, effects included.
    ///
    /// The proof presented with the session is spent whatever the verdict, before it is carried out: it is part of
    /// the credential (a proof shown once is used up, allowed or refused), as on the gateway's other routes
    /// (``SessionResolver/resolve(_:method:path:)``). When recording it finds a replay (here or on another instance),
    /// the front end carries out the decision for that refused credential instead
    /// (``decide(_:route:credential:policy:)`` with `.refused`): a path open to anyone still goes on, without identity.
    /// A front end that may wait spends before it decides (``SessionResolver/spent(_:)``); the relay on its loop
    /// decides first and decides again only on a replay.
    struct Plan: Sendable {
        let verdict: Verdict
        /// The credential's session, whatever the verdict: the audit line and the access log name it.
        let session: ActiveSession?
        /// The DPoP proof to record first; `nil` without one.
        let proof: DPoPProof?
        /// The access rules' decision when they were consulted, and the path they judged: the audit line
        /// (``AccessDecision/audit(session:method:path:via:requestID:metrics:logger:)``).
        let access: (decision: AccessDecision, path: NormalizedPath)?
    }

    /// Where a request's path takes it (steps 2, 3 and 5 above, from the path alone): chosen once, before the
    /// credential is looked at — a front end must know the upstream first (what it receives, whether the
    /// front end reaches it) — and handed to ``decide(_:route:credential:policy:)``.
    enum Route: Sendable {
        /// To `upstream` at `target`; `path` is `nil` when nothing needed it normalized yet (a plain path to
        /// the only upstream: ``decide(_:route:credential:policy:)`` splits it when it judges).
        case to(UpstreamRoute, target: String, path: NormalizedPath?)
        /// A path that does not normalize: refused (400), no upstream gets it.
        case invalid(any Error, fallback: UpstreamRoute)

        /// The upstream the request goes to when it goes (`backend` for a path that does not normalize).
        var upstream: UpstreamRoute {
            switch self {
            case .to(let upstream, _, _): upstream
            case .invalid(_, let fallback): fallback
            }
        }
    }

    /// The route of `facts`: its normalized path, upstream and request target there.
    static func route(_ facts: Facts, upstreams: UpstreamTable) -> Route {
        // Plain characters only, no empty or dot segments: the raw segments are the decoded ones, and the
        // target is the raw path (the common case, without splitting or re-encoding).
        if upstreams.isSingle, let plain = UpstreamPath.plainTarget(basePath: upstreams.fallback.basePath, path: facts.path, query: facts.query) {
            return .to(upstreams.fallback, target: plain, path: nil)
        }
        let plain = UpstreamPath.isPlain(path: facts.path, query: facts.query)
        let path: NormalizedPath
        if plain {
            path = NormalizedPath(segments: facts.path.split(separator: "/").map(String.init), trailingSlash: facts.path.hasSuffix("/"))
        } else {
            do {
                path = try NormalizedPath(raw: facts.path)
            } catch {
                return .invalid(error.problem, fallback: upstreams.fallback)
            }
        }
        let upstream = upstreams.route(path.segments)
        return .to(upstream, target: Self.target(path, raw: plain ? facts.path : nil, query: facts.query, upstream: upstream), path: path)
    }

    /// The plan of a request whose credential has been looked at (`credential`, from either of
    /// ``SessionResolver``'s entry points). `upstreams`: `backend` and `upstreams:`.
    static func decide(_ facts: Facts, credential: CredentialOutcome, policy: AccessPolicy, upstreams: UpstreamTable) -> Plan {
        decide(facts, route: route(facts, upstreams: upstreams), credential: credential, policy: policy)
    }

    /// The same with the route already chosen (``route(_:upstreams:)`` of the same facts).
    static func decide(_ facts: Facts, route: Route, credential: CredentialOutcome, policy: AccessPolicy) -> Plan {
        let (verdict, access) = verdict(facts, route: route, session: credential.session, sessionRefusal: credential.refusal, policy: policy)
        return Plan(verdict: verdict, session: credential.session, proof: credential.proof, access: access)
    }

    private static func verdict(
        _ facts: Facts, route: Route, session: ActiveSession?, sessionRefusal: (any Error)?, policy: AccessPolicy
    ) -> (Verdict, (decision: AccessDecision, path: NormalizedPath)?) {
        // Unless some rule lets anyone in, a request without a session ends here, before its path is read.
        if session == nil, !policy.hasAnonymousRules {
            return (.refuse(sessionRefusal ?? GatehouseError.invalidSession()), nil)
        }
        switch route {
        case .invalid(let error, _):
            return (.refuse(error), nil)
        case .to(let upstream, let target, let path):
            // Without rules (and the default fallback) every session reaches everything: nothing to judge.
            guard !policy.isOpenToSessions else { return (.forward(Forward(upstream: upstream, target: target, session: session)), nil) }
            let segments = path.map { $0.segments.map { Substring($0) } } ?? facts.path.split(separator: "/")
            let judgedPath = path ?? NormalizedPath(segments: segments.map(String.init), trailingSlash: facts.path.hasSuffix("/"))
            return judge(
                facts, path: judgedPath, segments: segments, target: target, upstream: upstream, session: session,
                sessionRefusal: sessionRefusal, policy: policy)
        }
    }

    /// The host the rules judge on `/v1/api`: a trusted proxy's `X-Forwarded-Host` (its first value; `trusted`:
    /// the peer is one of `trusted_proxies`), else the request's own `Host`.
    static func host(own: String?, forwarded: String?, trusted: Bool) -> String? {
        if trusted, let forwarded = forwarded.flatMap(ForwardedFields.firstValue) { return forwarded }
        return own
    }

    /// The request target at `upstream`: its base path, the path without the prefix (unless it is kept), the
    /// query. `raw`: the path as sent, when it is plain (``UpstreamPath/isPlain(path:query:)``).
    private static func target(_ path: NormalizedPath, raw: Substring?, query: Substring?, upstream: UpstreamRoute) -> String {
        let dropped = upstream.droppedSegments
        if let raw,
            let plain = UpstreamPath.plainTarget(
                basePath: upstream.basePath, path: UpstreamPath.remainder(of: raw, droppingSegments: dropped), query: query)
        {
            return plain
        }
        guard dropped > 0 else { return UpstreamPath.target(basePath: upstream.basePath, path: path, query: query) }
        let rest = NormalizedPath(segments: Array(path.segments.dropFirst(dropped)), trailingSlash: path.trailingSlash)
        var target = UpstreamPath.target(basePath: upstream.basePath, path: rest, query: nil)
        // `/billing/` asked: the upstream's own root, with its slash.
        if rest.segments.isEmpty, rest.trailingSlash, !target.hasSuffix("/") { target += "/" }
        if let query, !query.isEmpty { target += "?" + UpstreamPath.encodeQuery(query) }
        return target
    }

    private static func judge(
        _ facts: Facts, path: NormalizedPath, segments: [Substring], target: String, upstream: UpstreamRoute, session: ActiveSession?,
        sessionRefusal: (any Error)?, policy: AccessPolicy
    ) -> (Verdict, (decision: AccessDecision, path: NormalizedPath)?) {
        let user = session.map { (provider: $0.provider, identity: $0.identity) }
        // Normalized only when some rule names hosts (it costs a copy).
        let host = policy.namesHosts ? facts.host.flatMap { HostPattern.normalized(Substring($0)) } : nil
        let decision = policy.decide(method: facts.method, path: segments, host: host, user: user, authentication: session?.authentication)
        if let refusal = decision.refusal(sessionRefusal: sessionRefusal) { return (.refuse(refusal), (decision, path)) }
        return (.forward(Forward(upstream: upstream, target: target, session: session)), (decision, path))
    }
}
