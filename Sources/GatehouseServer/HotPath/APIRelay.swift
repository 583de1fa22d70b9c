import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Decides, for each request head, whether the event-loop relay serves it, and builds what goes to the
/// backend. Plain values only: ``APIRelayHandler`` calls it on the event loop, and it never blocks.
///
/// The relay takes a request only when it is sure to forward it: `/v1/api/…`, HTTP/1.1, a method the route
/// has, within the limits, no `Expect`, no CORS preflight or `Origin` to answer for, a session that
/// resolves, a path that normalizes. Everything else (every refusal and error included) goes to the router,
/// which answers as it always has — so both front ends give the same answers by construction.
///
/// WebSocket upgrades (RFC 6455: `GET`, `Connection: Upgrade`, `Upgrade: websocket`, no body) are the
/// relay's alone: it forwards them with the upgrade fields and, after the backend's `101`, tunnels the bytes.
/// A browser's upgrade carried by the session cookie must come from the gateway's own origin or a CORS-allowed
/// one (cross-site WebSocket hijacking); a bearer token is never sent by a browser on its own.
struct APIRelay: Sendable {
    let resolver: SessionResolver
    let signer: AssertionSigner
    let clock: TimeSource
    let settings: ServerSettings
    let metrics: GatewayMetrics
    let accessLog: AccessLog
    let logger: Logger
    let pools: UpstreamPools
    /// `access:` (read per request: SIGHUP may replace it).
    let access: AccessRules
    /// `backend` and `upstreams:` (``APIDecision`` chooses; read per request: SIGHUP may replace them).
    let upstreams: CurrentUpstreams
    let forwardedProto: String
    let forwardedHost: String
    /// The origins a cookie-carried upgrade may come from: the gateway's own and the CORS-allowed ones.
    let upgradeOrigins: Set<String>

    static let prefix = "/v1/api/"
    /// The methods `/v1/api` has.
    static func isRouted(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .POST, .PUT, .PATCH, .DELETE, .HEAD, .OPTIONS: true
        default: false
        }
    }

    /// The relay for a gateway, or `nil` when its backend is not plain `http://host[:port][/path]` at start-up
    /// (the router's client then carries every call, TLS included, for as long as it runs).
    init?(gateway: Gateway) {
        let settings = gateway.settings
        guard gateway.upstreams.current.fallback.relayTarget != nil else { return nil }
        self.upstreams = gateway.upstreams
        self.resolver = gateway.resolver
        self.signer = gateway.signer
        self.clock = gateway.clock
        self.settings = settings
        self.metrics = gateway.metrics
        self.accessLog = gateway.accessLog
        self.logger = gateway.logger
        self.pools = UpstreamPools(idleTimeout: .milliseconds(Int64(settings.upstreamKeepalive * 1000)))
        self.access = gateway.access
        forwardedProto = settings.publicURL.hasPrefix("https") ? "https" : "http"
        forwardedHost = settings.publicAuthority
        upgradeOrigins = Set(([settings.publicURL] + settings.corsAllowedOrigins).compactMap(WebOrigin.of))
    }

    /// What the access log reports of a relayed request.
    struct Entry: Sendable {
        let requestID: String
        let method: String
        let provider: String?
        let sessionID: String?
        /// The route it was decided with; `nil` for a refusal (labelled `backend`, as the router labels it).
        var upstream: UpstreamRoute? = nil
    }

    /// An upstream's label in the access log and the metrics; `backend` for a request refused before one was
    /// chosen (as the router labels it).
    static func label(_ upstream: UpstreamRoute?) -> String {
        upstream?.name ?? GatewayConfiguration.defaultUpstreamName
    }

    /// The route template of relayed requests in the access log and metrics (as the router names it).
    static let route = "/v1/api/**"
    /// The route template of `/v1/authz`.
    static let authzRoute = "/v1/authz"

    /// What to do with a request head.
    enum Decision: Sendable {
        /// The router answers.
        case pass
        /// The relay forwards this head.
        case forward(HTTPRequestHead, Entry)
        /// The relay forwards this upgrade request and, after the backend's `101`, tunnels the connection.
        case upgrade(HTTPRequestHead, Entry)
        /// Something must be read or signed first: ask ``decideAsync(_:remoteAddress:)``.
        case resolveAsync
        /// The relay answers with this problem itself (the one decision refused the request).
        case refuse(GatehouseError, Entry)
        /// The request was decided on the event loop with a DPoP proof; record the proof's `jti` in the store
        /// (``spend(_:then:_:remoteAddress:)``, the one step that leaves the loop), then carry out `then`.
        indirect case spend(DPoPProof, then: Decision)
    }

    /// The decision from memory alone. `memo` is the connection's (``Memo``): used when it still holds,
    /// replaced after a bearer token's look-up.
    func decide(_ head: HTTPRequestHead, remoteAddress: String?, memo: inout Memo?) -> Decision {
        let (upgrade, authorization): (Bool, String?)
        switch taken(head, remoteAddress: remoteAddress) {
        case .failure(let decision): return decision.value
        case .success(let claimed): (upgrade, authorization) = claimed
        }
        guard let routed = routed(head, remoteAddress: remoteAddress) else { return .pass }
        let backend = routed.route.upstream.backend
        let audience = backend.assertion ? backend.audience : nil
        let now = clock.now()
        if let kept = remembered(memo, authorization: authorization, audience: audience, now: now) {
            return forward(head, routed, upgrade: upgrade, session: kept.session, sessionRefusal: nil, remoteAddress: remoteAddress, assertion: kept.assertion)
        }
        let presented: (token: String, presentation: SessionResolver.Presentation)?
        do {
            presented = try credential(of: head, authorization: authorization, upgrade: upgrade)
        } catch {
            // An unusable credential (a scheme that is not ours, a cookie without X-CSRF) is no session: the
            // rules may still open the path to anyone, as for no credential at all.
            return forward(head, routed, upgrade: upgrade, session: nil, sessionRefusal: error, remoteAddress: remoteAddress, assertion: nil)
        }
        guard let (token, presentation) = presented else {
            return forward(head, routed, upgrade: upgrade, session: nil, sessionRefusal: nil, remoteAddress: remoteAddress, assertion: nil)
        }
        if presentation == .dpop {
            return decideWithProof(head, routed, token: token, upgrade: upgrade, remoteAddress: remoteAddress, audience: audience, now: now)
        }
        // From memory (a session, or a provider token's cached verdict); any other miss leaves the loop.
        switch fromMemory(token: token, presentation: presentation, authorization: authorization, audience: audience, now: now) {
        case .found(let found, let keep):
            let decision = forward(head, routed, upgrade: upgrade, session: found.session, sessionRefusal: nil, remoteAddress: remoteAddress, assertion: found.assertion)
            if keep { Self.keep(found, after: decision, in: &memo) }
            return decision
        case .refused(let refusal):
            return forward(head, routed, upgrade: upgrade, session: nil, sessionRefusal: refusal, remoteAddress: remoteAddress, assertion: nil)
        case .unknown:
            return .resolveAsync
        }
    }

    /// Keeps `found` as the connection's memo when the request it decided goes upstream.
    private static func keep(_ found: Memo, after decision: Decision, in memo: inout Memo?) {
        switch decision {
        case .forward, .upgrade: memo = found
        case .pass, .resolveAsync, .refuse, .spend: break
        }
    }

    /// A decision wrapped as an error, so that ``taken(_:remoteAddress:)`` can end a request early.
    private struct Ended: Error {
        let value: Decision
    }

    /// Whether the relay takes the head (``claim(_:)``): as an upgrade or not, and its `Authorization` value;
    /// or the decision when it ends here (not the relay's, or refused by the head's limits).
    private func taken(_ head: HTTPRequestHead, remoteAddress: String?) -> Result<(upgrade: Bool, authorization: String?), Ended> {
        let (claim, authorization) = claim(head)
        switch claim {
        case .none: return .failure(Ended(value: .pass))
        case .refuse(let error): return .failure(Ended(value: refuse(error, head, session: nil, remoteAddress: remoteAddress)))
        case .plain: return .success((false, authorization))
        case .upgrade: return .success((true, authorization))
        }
    }

    /// A DPoP-bound call decided on the event loop, like a bearer one: the session from memory, the proof
    /// checked here (its key's verifier kept from an earlier proof); only its `jti` record then leaves the loop
    /// (``Decision/spend(_:then:)``). Anything this cannot settle without waiting goes to ``decideAsync(_:remoteAddress:)``.
    private func decideWithProof(
        _ head: HTTPRequestHead, _ routed: Routed, token: String, upgrade: Bool, remoteAddress: String?, audience: String?, now: Date
    ) -> Decision {
        guard let session = resolver.cachedSessionForProof(token: token, now: now) else { return .resolveAsync }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let checked: DPoPProof??
        do {
            checked = try resolver.checkWithoutWaiting(
                session, token: token, presentation: .dpop, proofs: head.headers["dpop"], target: resolver.proofTarget(method: head.method.rawValue, path: path))
        } catch {
            return forward(head, routed, upgrade: upgrade, session: nil, sessionRefusal: error, remoteAddress: remoteAddress, assertion: nil)
        }
        guard case .some(let proof) = checked else { return .resolveAsync }
        var assertion: String?
        if let audience {
            guard let cached = signer.cachedAssertion(for: session, audience: audience, now: now) else { return .resolveAsync }
            assertion = cached
        }
        let decision = forward(head, routed, upgrade: upgrade, session: session, sessionRefusal: nil, remoteAddress: remoteAddress, assertion: assertion)
        // The proof is part of the credential, so it is spent whatever the rules say (as the router spends it
        // when it resolves the session): a proof shown once is used up, allowed or refused. Only the record is
        // waited for; the decision above stands unless the proof turns out to be a replay.
        switch decision {
        case .forward, .upgrade, .refuse:
            guard let proof else { return decision }
            return .spend(proof, then: decision)
        case .pass, .resolveAsync, .spend: return decision
        }
    }

    /// Records a proof decided on the event loop; the decision to carry out, or, when the proof was spent
    /// already, the decision for a request whose credential is refused.
    func spend(_ proof: DPoPProof, then decision: Decision, _ head: HTTPRequestHead, remoteAddress: String?) async -> Decision {
        do {
            try await resolver.spend(proof)
            return decision
        } catch {
            return replayed(error, head, remoteAddress: remoteAddress)
        }
    }

    /// The decision for a request whose proof could not be spent (a replay): its credential is refused, and
    /// the one decision says what that means on its path (a path open to anyone goes on without identity).
    private func replayed(_ error: any Error, _ head: HTTPRequestHead, remoteAddress: String?) -> Decision {
        guard case .success(let (upgrade, _)) = taken(head, remoteAddress: remoteAddress), let routed = routed(head, remoteAddress: remoteAddress) else {
            return refuse(error, head, session: nil, remoteAddress: remoteAddress)
        }
        return forward(head, routed, upgrade: upgrade, session: nil, sessionRefusal: error, remoteAddress: remoteAddress, assertion: nil)
    }

    /// The same on `eventLoop`: the record is handed to the store's writer and its answer completes the
    /// future on the request's loop — no task per request.
    func spend(
        _ proof: DPoPProof, then decision: Decision, _ head: HTTPRequestHead, remoteAddress: String?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<Decision> {
        let promise = eventLoop.makePromise(of: Decision.self)
        resolver.spend(proof) { recorded in
            switch recorded {
            case .success: promise.succeed(decision)
            case .failure(let error): promise.succeed(replayed(error, head, remoteAddress: remoteAddress))
            }
        }
        return promise.futureResult
    }

    /// The decision after reading the store, checking a DPoP proof or signing an assertion; never `.resolveAsync`.
    func decideAsync(_ head: HTTPRequestHead, remoteAddress: String?) async -> Decision {
        let (upgrade, authorization): (Bool, String?)
        switch taken(head, remoteAddress: remoteAddress) {
        case .failure(let decision): return decision.value
        case .success(let claimed): (upgrade, authorization) = claimed
        }
        guard let routed = routed(head, remoteAddress: remoteAddress) else { return .pass }
        let chosen = routed.route.upstream
        var session: ActiveSession?
        var refusal: (any Error)?
        var presented: (token: String, presentation: SessionResolver.Presentation)?
        do {
            presented = try credential(of: head, authorization: authorization, upgrade: upgrade)
        } catch {
            refusal = error
        }
        if let (token, presentation) = presented {
            // The steps of ``SessionResolver/resolve(_:method:proofTarget:)``, in its order: the proof is spent
            // with the credential, before the rules.
            do {
                let found = try await resolver.session(token: token, presentation: presentation)
                let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                if let proof = try await resolver.check(
                    found, token: token, presentation: presentation, proofs: head.headers["dpop"],
                    target: resolver.proofTarget(method: head.method.rawValue, path: path))
                {
                    try await resolver.spend(proof)
                }
                session = found
            } catch {
                refusal = error
            }
        }
        var assertion: String?
        if let session, chosen.backend.assertion {
            do {
                assertion = try await signer.assertion(for: session, audience: chosen.backend.audience, now: clock.now())
            } catch {
                return refuse(error, head, session: session, remoteAddress: remoteAddress)
            }
        }
        let decision = forward(head, routed, upgrade: upgrade, session: session, sessionRefusal: refusal, remoteAddress: remoteAddress, assertion: assertion)
        if case .resolveAsync = decision { return .pass }
        return decision
    }

    /// A refusal the relay answers itself: the error as the one error mapping renders it, for the access log
    /// with the session it concerns.
    func refuse(_ error: any Error, _ head: HTTPRequestHead, session: ActiveSession?, remoteAddress: String?, requestID: String? = nil) -> Decision {
        let entry = Entry(
            requestID: requestID ?? self.requestID(of: head.headers, remoteAddress: remoteAddress), method: head.method.rawValue,
            provider: session?.provider, sessionID: session?.id)
        return .refuse(ErrorMapping.problem(for: error, logger: logger), entry)
    }
}
