import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Tracing

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
final class APIRelay: Sendable {
    let resolver: SessionResolver
    let signer: AssertionSigner
    let clock: TimeSource
    let settings: ServerSettings
    let metrics: GatewayMetrics
    let accessLog: AccessLog
    let logger: Logger
    let pools: UpstreamPools
    /// For `/v1/authz` answers whose app receives the provider's access token: refreshed first.
    let providers: ProviderSet
    let refresher: RefreshCoordinator
    let refreshPolicy: RefreshPolicy
    /// The access rules and the upstreams (read once per request: SIGHUP may replace them).
    let policy: CurrentPolicy
    /// The forwarded fields, the answer's fields, the failures: shared with the router's ``UpstreamClient``.
    let upstreamProtocol: UpstreamProtocol
    /// The origins a cookie-carried upgrade may come from: the gateway's own and the CORS-allowed ones.
    let upgradeOrigins: Set<String>
    /// The tracer when tracing is on; nil: no span, and the client's trace context passes through untouched.
    let tracing: GatewayTracing?

    static let prefix = "/v1/api/"
    /// The methods `/v1/api` and `/v1/authz` have (``UpstreamProtocol/isRouted(_:)``).
    static func isRouted(_ method: HTTPMethod) -> Bool {
        UpstreamProtocol.isRouted(method.rawValue)
    }

    /// The relay for a gateway, or `nil` when its backend is not plain `http://host[:port][/path]` at start-up
    /// (the router's client then carries every call, TLS included, for as long as it runs).
    init?(gateway: Gateway) {
        let settings = gateway.settings
        guard gateway.policy.current.upstreams.fallback.relayTarget != nil else { return nil }
        self.resolver = gateway.resolver
        self.signer = gateway.signer
        self.clock = gateway.clock
        self.settings = settings
        self.metrics = gateway.metrics
        self.accessLog = gateway.accessLog
        self.logger = gateway.logger
        self.pools = UpstreamPools(
            maxIdlePerLoop: settings.upstreamIdleConnections, idleTimeout: .milliseconds(Int64(settings.upstreamKeepalive * 1000)))
        self.policy = gateway.policy
        self.providers = gateway.providers
        self.refresher = gateway.refresher
        self.refreshPolicy = gateway.refreshPolicy
        upstreamProtocol = UpstreamProtocol(settings: settings)
        tracing = gateway.tracing
        upgradeOrigins = Set(([settings.publicURL] + settings.corsAllowedOrigins).compactMap(WebOrigin.of))
    }

    /// What the access log reports of a request the relay serves, and what its own answer carries besides.
    struct Entry: Sendable {
        let requestID: String
        let method: String
        let provider: String?
        let sessionID: String?
        /// The route it was decided with; `nil` for a refusal (labelled `backend`, as the router labels it).
        var upstream: UpstreamRoute? = nil
        /// The route template: ``APIRelay/route`` or ``APIRelay/authzRoute``.
        var route: String = APIRelay.route
        /// `/v1/authz`: the app of `forward_auth.apps:` answered for (the access log's `upstream`); `nil` for `backend`'s settings.
        var app: String? = nil
        /// Fields a refusal carries besides the problem's (a forward-auth 401's sign-in page).
        var answerFields: [(String, String)] = []
        /// The request's spans when tracing is on.
        var trace: RelayTrace? = nil

        /// Ends the request's spans, if any: the trace id for its access-log line.
        func finishTrace(status: Int, upstream: String?) -> String? {
            trace?.finish(method: method, route: route, status: status, provider: provider, upstream: upstream, requestID: requestID)
        }
    }

    /// An upstream's label in the access log and the metrics; `backend` for a request refused before one was
    /// chosen (as the router labels it).
    static func label(_ upstream: UpstreamRoute?) -> String {
        upstream?.name ?? GatewayConfiguration.defaultUpstreamName
    }

    /// The route template of relayed requests in the access log and metrics (as the router names it).
    static let route = UpstreamProtocol.route
    /// The route template of `/v1/authz`.
    static let authzRoute = UpstreamProtocol.authzRoute

    /// The relay's plan for a request head: the one decision's plan (``APIDecision/Plan``, ``ForwardAuthDecision/Plan``) as
    /// this front end carries it out.
    enum Plan: Sendable {
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
        /// The relay answers with this head and no body itself (`/v1/authz` allowed).
        case answer(HTTPResponseHead, Entry)
        /// The request was decided on the event loop with a DPoP proof; record the proof's `jti` in the store
        /// (``spend(_:then:_:remoteAddress:on:)``, the one step that leaves the loop), then carry out `then`.
        indirect case spend(DPoPProof, then: Plan)

        /// The request's spans, when tracing is on and the plan has them.
        var trace: RelayTrace? {
            switch self {
            case .forward(_, let entry), .upgrade(_, let entry), .refuse(_, let entry), .answer(_, let entry): entry.trace
            case .spend(_, let then): then.trace
            case .pass, .resolveAsync: nil
            }
        }
    }

    /// The decision from memory alone (``SessionResolver/credentialFromMemory(_:memo:now:)``, the connection's
    /// `memo` included, which is replaced when the request goes upstream); `.resolveAsync` when the store must be
    /// read, a provider token verified, a proof's signature awaited or an assertion signed first.
    func decide(_ head: HTTPRequestHead, remoteAddress: String?, memo: inout CredentialMemo?) -> Plan {
        let (upgrade, authorization): (Bool, String?)
        switch taken(head, remoteAddress: remoteAddress) {
        case .ended(let decision): return decision
        case .taken(let asUpgrade, let value): (upgrade, authorization) = (asUpgrade, value)
        }
        guard let routed = routed(head, remoteAddress: remoteAddress) else { return .pass }
        let now = clock.now()
        // The connection's memo is compared with the `Authorization` value before anything is parsed or hashed.
        guard
            let (credential, found) = resolver.credentialFromMemory(
                authorization: authorization, memo: memo, now: now, providerGeneration: routed.providerGeneration,
                presented: { try presented(head, authorization: authorization, upgrade: upgrade) })
        else { return .resolveAsync }
        var kept = found
        let plan = APIDecision.decide(routed.facts, route: routed.route, credential: credential, policy: routed.policy)
        // The assertion from the connection's memo or the signer's cache; signing one leaves the loop.
        var assertion: String?
        if case .forward(let forward) = plan.verdict, let session = forward.session, let audience = forward.audience {
            if let remembered = kept?.assertion(for: audience) {
                assertion = remembered
            } else if let (signed, until) = signer.cachedAssertionEntry(for: session, audience: audience, now: now) {
                assertion = signed
                kept = kept?.with(assertion: signed, audience: audience, reusedUntil: until)
            } else {
                return .resolveAsync
            }
        }
        let decision = carryOut(plan, head, routed, upgrade: upgrade, assertion: assertion, remoteAddress: remoteAddress)
        switch decision {
        case .forward, .upgrade: if let kept { memo = kept }
        case .pass, .resolveAsync, .refuse, .answer, .spend: break
        }
        // Only the proof's record in the store leaves the loop (one in memory is made here); the decision stands
        // unless the proof turns out to be a replay.
        guard let proof = plan.proof else { return decision }
        switch resolver.spendWithoutWaiting(proof) {
        case .success?: return decision
        case .failure(let error)?: return replayed(error, head, remoteAddress: remoteAddress)
        case nil: return .spend(proof, then: decision)
        }
    }

    /// Runs `body` (the work for `head` off the event loop) in the request's trace, begun now when tracing is on: the
    /// store reads and provider calls it makes are children of the request's span (``RelayTrace/during(_:_:)``).
    func traced(_ head: HTTPRequestHead, _ body: () async -> Plan) async -> Plan {
        guard let tracing else { return await body() }
        let trace = tracing.begin(headers: head.headers, operation: head.method.rawValue)
        let plan = await RelayTrace.during(trace, body)
        // The router traces what it answers: the span begun for the relay's reads ends here rather than never.
        if case .pass = plan, case .sampled(let span) = trace { span.end() }
        return plan
    }

    /// The decision after reading the store, checking a DPoP proof or signing an assertion; never `.resolveAsync`.
    func decideAsync(_ head: HTTPRequestHead, remoteAddress: String?) async -> Plan {
        let (upgrade, authorization): (Bool, String?)
        switch taken(head, remoteAddress: remoteAddress) {
        case .ended(let decision): return decision
        case .taken(let asUpgrade, let value): (upgrade, authorization) = (asUpgrade, value)
        }
        guard let routed = routed(head, remoteAddress: remoteAddress) else { return .pass }
        let credential: CredentialOutcome
        do {
            credential = await resolver.spent(
                resolver.credential(try presented(head, authorization: authorization, upgrade: upgrade), providerTokens: true))
        } catch {
            credential = .refused(error)
        }
        let plan = APIDecision.decide(routed.facts, route: routed.route, credential: credential, policy: routed.policy)
        var assertion: String?
        if case .forward(let forward) = plan.verdict, let session = forward.session, let audience = forward.audience {
            do {
                assertion = try await signer.assertion(for: session, audience: audience, now: clock.now())
            } catch {
                return refuse(error, head, session: session, remoteAddress: remoteAddress)
            }
        }
        return carryOut(plan, head, routed, upgrade: upgrade, assertion: assertion, remoteAddress: remoteAddress)
    }

    /// Whether the relay takes the head (``claim(_:)``): as an upgrade or not, and its `Authorization` value;
    /// or the decision when it ends here (not the relay's, or refused by the head's limits).
    private func taken(_ head: HTTPRequestHead, remoteAddress: String?) -> Taken {
        let (claim, authorization) = claim(head)
        switch claim {
        case .none: return .ended(.pass)
        case .refuse(let error): return .ended(refuse(error, head, session: nil, remoteAddress: remoteAddress))
        case .plain: return .taken(upgrade: false, authorization: authorization)
        case .upgrade: return .taken(upgrade: true, authorization: authorization)
        }
    }

    private enum Taken {
        case taken(upgrade: Bool, authorization: String?)
        /// Not the relay's, or refused by the head's limits.
        case ended(Plan)
    }

    /// Records a proof decided on the event loop on `eventLoop` (the record is handed to the store's writer and
    /// its answer completes the future on the request's loop — no task per request): the decision to carry out,
    /// or, when the proof was spent already, the decision for the refused credential (``APIDecision/Plan``).
    func spend(
        _ proof: DPoPProof, then decision: Plan, _ head: HTTPRequestHead, remoteAddress: String?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<Plan> {
        let promise = eventLoop.makePromise(of: Plan.self)
        resolver.spend(proof) { recorded in
            switch recorded {
            case .success: promise.succeed(decision)
            case .failure(let error):
                // The refusal goes on in the request's span begun for the decision, which it then ends.
                promise.succeed(RelayTrace.continuing(decision.trace) { self.replayed(error, head, remoteAddress: remoteAddress) })
            }
        }
        return promise.futureResult
    }

    /// The decision for a request whose proof could not be spent (a replay): its credential is refused, and the one
    /// decision says what that means on its path (a path open to anyone goes on without identity).
    private func replayed(_ error: any Error, _ head: HTTPRequestHead, remoteAddress: String?) -> Plan {
        guard case .taken(let upgrade, _) = taken(head, remoteAddress: remoteAddress), let routed = routed(head, remoteAddress: remoteAddress) else {
            return refuse(error, head, session: nil, remoteAddress: remoteAddress)
        }
        let plan = APIDecision.decide(routed.facts, route: routed.route, credential: .refused(error), policy: routed.policy)
        return carryOut(plan, head, routed, upgrade: upgrade, assertion: nil, remoteAddress: remoteAddress)
    }

    /// A refusal the relay answers itself: the error as the one error mapping renders it, for the access log
    /// with the session it concerns.
    func refuse(_ error: any Error, _ head: HTTPRequestHead, session: ActiveSession?, remoteAddress: String?, requestID: String? = nil) -> Plan {
        var entry = Entry(
            requestID: requestID ?? self.requestID(of: head.headers, remoteAddress: remoteAddress), method: head.method.rawValue,
            provider: session?.provider, sessionID: session?.id)
        if let tracing { entry.trace = .answered(tracing, head: head, verdict: "refuse") }
        return .refuse(ErrorMapping.problem(for: error, logger: logger), entry)
    }
}
