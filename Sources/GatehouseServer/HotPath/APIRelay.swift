import Foundation
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
    /// `backend` and `upstreams:` (``APIDecision`` chooses).
    let upstreams: UpstreamTable
    /// How the relay reaches each upstream, by its position in ``UpstreamTable/all``; `nil` for one that is not
    /// plain `http://host[:port][/path]` (the router's client carries those, TLS included).
    let targets: [RelayTarget?]
    private let forwardedProto: String
    private let forwardedHost: String
    /// The origins a cookie-carried upgrade may come from: the gateway's own and the CORS-allowed ones.
    private let upgradeOrigins: Set<String>

    private static let prefix = "/v1/api/"
    /// The methods `/v1/api` has.
    private static func isRouted(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .POST, .PUT, .PATCH, .DELETE, .HEAD, .OPTIONS: true
        default: false
        }
    }

    /// The relay for a gateway, or `nil` when its backend is not plain `http://host[:port][/path]` (the
    /// router's client then carries every call, TLS included).
    init?(gateway: Gateway) {
        let settings = gateway.settings
        let upstreams = UpstreamTable(settings: settings)
        let targets = upstreams.all.map { RelayTarget(url: $0.backend.url) }
        guard targets[0] != nil else { return nil }
        self.upstreams = upstreams
        self.targets = targets
        self.resolver = gateway.resolver
        self.signer = gateway.signer
        self.clock = gateway.clock
        self.settings = settings
        self.metrics = gateway.metrics
        self.accessLog = gateway.accessLog
        self.logger = gateway.logger
        self.pools = UpstreamPools(endpoints: targets.map { $0?.endpoint }, idleTimeout: .milliseconds(Int64(settings.upstreamKeepalive * 1000)))
        self.access = gateway.access
        forwardedProto = settings.publicURL.hasPrefix("https") ? "https" : "http"
        forwardedHost = settings.publicAuthority
        upgradeOrigins = Set([Self.origin(of: settings.publicURL)] + settings.corsAllowedOrigins.map(Self.origin(of:)))
    }

    /// `scheme://authority` of a URL, lowercased: how a browser's `Origin` spells it.
    private static func origin(of url: String) -> String {
        let lowered = ASCII.lowercased(url)
        guard let scheme = lowered.range(of: "://") else { return lowered }
        let rest = lowered[scheme.upperBound...]
        return String(lowered[..<scheme.upperBound]) + rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    /// What the access log reports of a relayed request.
    struct Entry: Sendable {
        let requestID: String
        let method: String
        let provider: String?
        let sessionID: String?
        /// The upstream's position in ``UpstreamTable/all`` (0, `backend`, for refusals).
        var upstream = 0
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

    /// What one connection remembers of the session its last request presented: a keep-alive client sends
    /// the same `Authorization` each time, and while the answer it rests on still holds (``Source``) and no
    /// deadline has passed, the session and assertion found then are still the ones the look-ups would find —
    /// without hashing the token or taking a lock again.
    struct Memo {
        /// What the session came from, and what must not have changed since for it to hold.
        enum Source: Equatable {
            /// A Gatehouse session from the store's cache, which has evicted nothing since
            /// (``CachedSessionLookup/evictionEpoch``).
            case session(epoch: UInt64)
            /// A provider-issued token's cached verdict, made under the providers of this
            /// ``ProviderSet/generation`` (a reload voids it).
            case providerToken(generation: UInt64)
        }

        /// The `Authorization` value, byte for byte.
        let authorization: String
        let source: Source
        /// The first of: the session's end, idle limit and next recorded activity (a provider token: its
        /// verdict's end), the assertion's reuse limit, and one second after it was made (a bound of its own
        /// on anything else unforeseen).
        let until: Date
        let session: ActiveSession
        let assertion: String?
        /// The audience `assertion` is for (`nil`: none was needed).
        let audience: String?
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
        // A JWT is never a session token (those have no dots): no session look-up for a provider's JWT.
        let providerJWT = presentation == .bearer && ProviderTokenAuthenticator.isJWT(token)
        // Hashed once: the session cache and the provider tokens' verdicts are both by the token's hash.
        let tokenHash = RandomToken.hash(token)
        if !providerJWT, let found = fromMemory(tokenHash: tokenHash, authorization: authorization ?? "", audience: audience, now: now) {
            let decision = forward(head, routed, upgrade: upgrade, session: found.session, sessionRefusal: nil, remoteAddress: remoteAddress, assertion: found.assertion)
            if presentation == .bearer, authorization != nil { Self.keep(found, after: decision, in: &memo) }
            return decision
        }
        // A provider-issued bearer token whose verdict is cached is decided here too; any other miss leaves the loop.
        guard presentation == .bearer, let cached = resolver.cachedProviderVerdict(tokenHash: tokenHash, now: now) else { return .resolveAsync }
        switch cached.verdict {
        case .success(let session):
            let found = authorization.flatMap {
                providerMemo(session, authorization: $0, until: cached.until, generation: cached.generation, audience: audience, now: now)
            }
            let decision = forward(head, routed, upgrade: upgrade, session: session, sessionRefusal: nil, remoteAddress: remoteAddress, assertion: found?.assertion)
            if let found { Self.keep(found, after: decision, in: &memo) }
            return decision
        case .failure(let refusal):
            return forward(head, routed, upgrade: upgrade, session: nil, sessionRefusal: refusal, remoteAddress: remoteAddress, assertion: nil)
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
        switch decision {
        case .forward, .upgrade:
            guard let proof else { return decision }
            return .spend(proof, then: decision)
        case .refuse, .pass, .resolveAsync, .spend: return decision
        }
    }

    /// Records a proof decided on the event loop; the decision to carry out, or the replay's refusal.
    func spend(_ proof: DPoPProof, then decision: Decision, _ head: HTTPRequestHead, remoteAddress: String?) async -> Decision {
        do {
            try await resolver.spend(proof)
            return decision
        } catch {
            return refuse(error, head, session: nil, remoteAddress: remoteAddress)
        }
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
            case .failure(let error): promise.succeed(refuse(error, head, session: nil, remoteAddress: remoteAddress))
            }
        }
        return promise.futureResult
    }

    /// The connection's memo, when it still holds for this `Authorization` value.
    private func remembered(_ memo: Memo?, authorization: String?, audience: String?, now: Date) -> Memo? {
        guard let memo, let authorization, memo.authorization == authorization, memo.audience == audience, now < memo.until else { return nil }
        switch memo.source {
        case .session(let epoch): guard epoch == resolver.cacheEpoch else { return nil }
        case .providerToken(let generation): guard generation == resolver.providerGeneration else { return nil }
        }
        return memo
    }

    /// The session of a token (by its hash) and its assertion (when the backend gets one) from memory alone,
    /// as a memo to keep; `nil` when the store must be read or an assertion signed first.
    private func fromMemory(tokenHash: String, authorization: String, audience: String?, now: Date) -> Memo? {
        // Read before the look-up: an eviction after it makes the memo stale at once.
        // A session bound to a key is only ever taken with its proof (``decideAsync(_:remoteAddress:)``).
        guard let epoch = resolver.cacheEpoch, let (session, sessionUntil) = resolver.cachedSession(tokenHash: tokenHash, now: now) else { return nil }
        return memo(session, source: .session(epoch: epoch), authorization: authorization, until: sessionUntil, audience: audience, now: now)
    }

    /// A provider token's session (its cached verdict, until `until`) and assertion as a memo to keep; `nil`
    /// when an assertion must be signed first.
    private func providerMemo(
        _ session: ActiveSession, authorization: String, until: Date, generation: UInt64, audience: String?, now: Date
    ) -> Memo? {
        memo(session, source: .providerToken(generation: generation), authorization: authorization, until: until, audience: audience, now: now)
    }

    /// A memo of `session`, valid until `until` at most; `nil` when its assertion is not at hand.
    private func memo(_ session: ActiveSession, source: Memo.Source, authorization: String, until: Date, audience: String?, now: Date) -> Memo? {
        var assertion: String?
        var until = min(until, now.addingTimeInterval(1))
        if let audience {
            guard let (signed, signedUntil) = signer.cachedAssertionEntry(for: session, audience: audience, now: now) else { return nil }
            assertion = signed
            until = min(until, signedUntil)
        }
        return Memo(authorization: authorization, source: source, until: until, session: session, assertion: assertion, audience: audience)
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
        var proof: DPoPProof?
        var presented: (token: String, presentation: SessionResolver.Presentation)?
        do {
            presented = try credential(of: head, authorization: authorization, upgrade: upgrade)
        } catch {
            refusal = error
        }
        if let (token, presentation) = presented {
            // The steps of ``SessionResolver/resolve(_:method:proofTarget:)``, the proof spent last (below).
            do {
                let found = try await resolver.session(token: token, presentation: presentation)
                let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                proof = try await resolver.check(
                    found, token: token, presentation: presentation, proofs: head.headers["dpop"],
                    target: resolver.proofTarget(method: head.method.rawValue, path: path))
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
        switch decision {
        case .forward, .upgrade:
            // Spent last, when the request goes upstream for sure.
            guard let proof else { return decision }
            do {
                try await resolver.spend(proof)
            } catch {
                return refuse(error, head, session: session, remoteAddress: remoteAddress)
            }
            return decision
        case .refuse, .pass, .spend: return decision
        case .resolveAsync: return .pass
        }
    }

    /// A refusal the relay answers itself: the error as the one error mapping renders it, for the access log
    /// with the session it concerns.
    private func refuse(_ error: any Error, _ head: HTTPRequestHead, session: ActiveSession?, remoteAddress: String?, requestID: String? = nil) -> Decision {
        let entry = Entry(
            requestID: requestID ?? self.requestID(of: head.headers, remoteAddress: remoteAddress), method: head.method.rawValue,
            provider: session?.provider, sessionID: session?.id)
        return .refuse(ErrorMapping.problem(for: error, logger: logger), entry)
    }

    // MARK: Forward authentication

    /// What the relay answers to a forward-auth question itself.
    enum AuthzAnswer {
        /// 200 with the identity fields.
        case allowed(HTTPResponseHead, Entry)
        /// A problem, with fields of its own (the sign-in page of a 401).
        case refused(GatehouseError, fields: [(String, String)], Entry)
    }

    /// `/v1/authz` answered from memory — the session in the store's cache or this connection's ``Memo`` (or
    /// none), the access rules, a cached assertion — as ``AuthzController`` answers it, refusals included;
    /// `nil` for the router when the store must be read, a DPoP proof checked, an assertion signed or a
    /// forwarded access token refreshed, or the request has a body.
    func authorize(_ head: HTTPRequestHead, remoteAddress: String?, memo: inout Memo?) -> AuthzAnswer? {
        guard head.version == .http1_1, Self.isRouted(head.method), ForwardAuthTarget.isAuthz(head.uri), !settings.backend.forwardAccessToken
        else { return nil }
        var hosts = 0
        var authorization: String?
        var size = 0
        var fields: [String: String] = [:]
        var repeated: String?
        for (name, value) in head.headers {
            size += name.utf8.count + value.utf8.count + 4
            switch name.utf8.count {
            case 4 where ASCII.equalsIgnoringCase(name, "host"): hosts += 1
            case 13 where ASCII.equalsIgnoringCase(name, "authorization"):
                authorization = authorization.map { $0 + ", " + value } ?? value
            case 14 where ASCII.equalsIgnoringCase(name, "content-length"):
                guard value == "0" else { return nil }
            case 17 where ASCII.equalsIgnoringCase(name, "transfer-encoding"): return nil
            case 6 where ASCII.equalsIgnoringCase(name, "expect"): return nil
            case 7 where ASCII.equalsIgnoringCase(name, "upgrade"): return nil
            case 14, 15, 16, 17, 18:
                let lowered = ASCII.lowercased(name)
                guard ForwardAuthTarget.singleFields.contains(lowered) else { continue }
                if fields.updateValue(value, forKey: lowered) != nil { repeated = repeated ?? name }
            default: break
            }
        }
        let requestID = requestID(of: head.headers, remoteAddress: remoteAddress)
        func refused(_ error: any Error, session: ActiveSession? = nil, fields: [(String, String)] = []) -> AuthzAnswer {
            let entry = Entry(requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
            return .refused(ErrorMapping.problem(for: error, logger: logger), fields: fields, entry)
        }
        // In the router's order: the head's limits, the forward-auth fields, the original path, the session.
        if let refusal = RequestHeadLimits.refusal(hosts: hosts, targetBytes: head.uri.utf8.count, fieldBytes: size, settings: settings) {
            return refused(refusal)
        }
        if let repeated { return refused(GatehouseError.invalidRequest("\(repeated) may be sent only once.")) }
        let original: ForwardAuthTarget
        let path: NormalizedPath
        do {
            original = try ForwardAuthTarget(
                forwardedMethod: fields["x-forwarded-method"], forwardedURI: fields["x-forwarded-uri"],
                originalMethod: fields["x-original-method"], originalURI: fields["x-original-uri"], originalURL: fields["x-original-url"],
                ownMethod: head.method.rawValue, ownTarget: head.uri, forwardedHost: fields["x-forwarded-host"])
            path = try UpstreamPath.normalized(original.path, droppingSegments: 0)
        } catch {
            return refused(error)
        }

        var session: ActiveSession?
        var assertion: String?
        var sessionRefusal: (any Error)?
        let now = clock.now()
        let audience = settings.backend.assertion ? settings.backend.audience : nil
        if let kept = remembered(memo, authorization: authorization, audience: audience, now: now) {
            (session, assertion) = (kept.session, kept.assertion)
        } else {
            do {
                // GET: no X-CSRF is asked of a cookie here (see ``AuthzController``).
                if let (token, presentation) = try credential(of: head, authorization: authorization, method: "GET") {
                    // From memory (a session, or a provider token's cached verdict), or the router reads the store,
                    // verifies the provider token or checks the proof.
                    let tokenHash = RandomToken.hash(token)
                    if let found = presentation == .dpop ? nil : fromMemory(tokenHash: tokenHash, authorization: authorization ?? "", audience: audience, now: now) {
                        (session, assertion) = (found.session, found.assertion)
                        if presentation == .bearer, authorization != nil { memo = found }
                    } else {
                        guard presentation == .bearer, let cached = resolver.cachedProviderVerdict(tokenHash: tokenHash, now: now) else { return nil }
                        switch cached.verdict {
                        case .success(let found):
                            let kept = authorization.flatMap {
                                providerMemo(found, authorization: $0, until: cached.until, generation: cached.generation, audience: audience, now: now)
                            }
                            guard let kept else { return nil }
                            (session, assertion) = (found, kept.assertion)
                            memo = kept
                        case .failure(let refusal): sessionRefusal = refusal
                        }
                    }
                }
            } catch {
                sessionRefusal = error
            }
        }
        let user = session.map { (provider: $0.provider, identity: $0.identity) }
        let policy = access.current
        let host = policy.namesHosts ? original.host.flatMap { HostPattern.normalized(Substring($0)) } : nil
        let decision = policy.decide(method: original.method, path: path.segments.map { Substring($0) }, host: host, user: user)
        decision.audit(session: session, method: original.method, path: path, via: "authz", requestID: requestID, metrics: metrics, logger: logger)
        if let refusal = decision.refusal(sessionRefusal: sessionRefusal) {
            let signIn = decision == .needsSession ? [(ForwardAuthAnswer.signInField, ForwardAuthAnswer.signInURL(publicURL: settings.publicURL, returningTo: original.target))] : []
            return refused(refusal, session: session, fields: signIn)
        }
        if let session {
            guard Self.isSafeFieldValue(session.identity.subject), Self.isSafeFieldValue(session.provider),
                session.identity.email.map(Self.isSafeFieldValue) ?? true, session.identity.groups.allSatisfy(Self.isSafeFieldValue)
            else { return nil }
        }
        var headers = HTTPHeaders()
        ForwardAuthAnswer.fields(session: session, backend: settings.backend, assertion: assertion) { headers.add(name: $0, value: $1) }
        let entry = Entry(requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "X-Request-Id", value: entry.requestID)
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        return .allowed(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers), entry)
    }

    // MARK: Claims

    /// How the relay may take a request.
    private enum Claim {
        /// Not the relay's: another route, or what only the router does (CORS, `Expect`, HTTP/1.0, upgrades
        /// other than WebSocket, a credential to refresh…).
        case none
        /// Refused by the request head's limits, as `RequestHeadMiddleware` refuses them on the router.
        case refuse(GatehouseError)
        case plain
        case upgrade
    }

    /// Whether the head is one the relay may take, judged in one pass over the fields, and its
    /// `Authorization` value (several fields joined by `, `, as HTTP fields are read).
    private func claim(_ head: HTTPRequestHead) -> (Claim, authorization: String?) {
        guard head.version == .http1_1, head.uri.hasPrefix(Self.prefix), Self.isRouted(head.method) else { return (.none, nil) }
        var authorization: String?
        var hosts = 0
        var lengths = 0
        var chunked = false
        var upgrades = 0
        var websocket = false
        var connectionUpgrade = false
        var origins = 0
        var size = 0
        for (name, value) in head.headers {
            size += name.utf8.count + value.utf8.count + 4
            switch name.utf8.count {
            case 4 where ASCII.equalsIgnoringCase(name, "host"): hosts += 1
            case 13 where ASCII.equalsIgnoringCase(name, "authorization"):
                authorization = authorization.map { $0 + ", " + value } ?? value
            case 14 where ASCII.equalsIgnoringCase(name, "content-length"):
                lengths += 1
                guard let length = Int(value), length >= 0 else { return (.none, nil) }
            case 17 where ASCII.equalsIgnoringCase(name, "transfer-encoding"):
                guard ASCII.equalsIgnoringCase(value, "chunked") else { return (.none, nil) }
                chunked = true
            case 10 where ASCII.equalsIgnoringCase(name, "connection"):
                connectionUpgrade = connectionUpgrade || Self.hasUpgradeToken(value)
            case 7 where ASCII.equalsIgnoringCase(name, "upgrade"):
                upgrades += 1
                websocket = ASCII.equalsIgnoringCase(ASCII.trimmed(Substring(value)), "websocket")
            case 6 where ASCII.equalsIgnoringCase(name, "expect"): return (.none, nil)
            case 6 where ASCII.equalsIgnoringCase(name, "origin"): origins += 1
            default: break
            }
        }
        guard lengths <= 1 else { return (.none, nil) }
        if let refusal = RequestHeadLimits.refusal(hosts: hosts, targetBytes: head.uri.utf8.count, fieldBytes: size, settings: settings) {
            return (.refuse(refusal), nil)
        }
        if upgrades == 0 {
            // The router answers CORS (preflights and `Origin`).
            return (origins > 0 && !settings.corsAllowedOrigins.isEmpty ? .none : .plain, authorization)
        }
        // Only a WebSocket handshake is upgraded; anything else that asks for a new protocol goes to the router.
        guard upgrades == 1, websocket, connectionUpgrade, head.method == .GET, lengths == 0, !chunked, origins <= 1 else { return (.none, nil) }
        return (.upgrade, authorization)
    }

    /// Whether a `Connection` value lists `upgrade`.
    private static func hasUpgradeToken(_ value: String) -> Bool {
        value.split(separator: ",").contains { ASCII.equalsIgnoringCase(ASCII.trimmed($0), "upgrade") }
    }

    /// The credential the request presents (``SessionResolver/token(authorization:cookies:csrf:method:)``);
    /// `nil` when none. A browser sends the cookie on any site's WebSocket: on an upgrade only the gateway's own
    /// origins may present it so, and from anywhere else the cookie is no credential.
    private func credential(
        of head: HTTPRequestHead, authorization: String?, upgrade: Bool = false, method: String? = nil
    ) throws -> (token: String, presentation: SessionResolver.Presentation)? {
        // Read only without `Authorization`, which wins over a cookie.
        let cookies = authorization == nil ? head.headers["cookie"] : []
        if authorization == nil {
            guard !cookies.isEmpty, resolver.cookies.token(in: cookies) != nil else { return nil }
            if upgrade {
                guard let origin = head.headers.first(name: "origin"), upgradeOrigins.contains(ASCII.lowercased(origin)) else { return nil }
            }
        }
        let (token, presentation) = try resolver.token(
            authorization: authorization, cookies: cookies, csrf: head.headers.first(name: "x-csrf"), method: method ?? head.method.rawValue)
        return (token, presentation)
    }

    // MARK: The upstream head

    /// The one decision (``APIDecision``) for a request whose credential has been looked at, carried out:
    /// the upstream head, or the refusal.
    private func forward(
        _ head: HTTPRequestHead, _ routed: Routed, upgrade: Bool, session: ActiveSession?, sessionRefusal: (any Error)?, remoteAddress: String?, assertion: String?
    ) -> Decision {
        var assertion = assertion
        let facts = routed.facts
        // The upstream the decision below forwards to (its route): what it receives is known before.
        let chosen = routed.route.upstream
        if let session {
            // A refreshable credential that the backend receives may need a refresh before or a replay after
            // the call: the router's path does both.
            if chosen.backend.forwardAccessToken, session.credential.isRefreshable { return .pass }
            if chosen.backend.assertion, assertion == nil {
                guard let cached = signer.cachedAssertion(for: session, audience: chosen.backend.audience, now: clock.now()) else { return .resolveAsync }
                assertion = cached
            }
            // Identity values come from providers: one with a line break would add fields of its own upstream
            // (the router's field type replaces such bytes).
            guard Self.isSafeFieldValue(session.identity.subject), Self.isSafeFieldValue(session.provider),
                session.identity.email.map(Self.isSafeFieldValue) ?? true,
                session.identity.groups.allSatisfy(Self.isSafeFieldValue),
                !chosen.backend.forwardAccessToken || Self.isSafeFieldValue(session.credential.accessToken)
            else { return .pass }
        }
        let (verdict, judged) = APIDecision.decide(facts, route: routed.route, session: session, sessionRefusal: sessionRefusal, policy: routed.policy)
        let requestID = requestID(of: head.headers, remoteAddress: remoteAddress)
        if let judged {
            judged.decision.audit(session: session, method: facts.method, path: judged.path, via: "api", requestID: requestID, metrics: metrics, logger: logger)
        }
        switch verdict {
        case .refuse(let error):
            return refuse(error, head, session: session, remoteAddress: remoteAddress, requestID: requestID)
        case .forward(let target, let session, let upstream):
            guard let reached = targets[upstream.index] else { return .pass }
            if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > settings.maxBodyBytes {
                return refuse(
                    GatehouseError.payloadTooLarge("The request body exceeds \(settings.maxBodyBytes) bytes."), head, session: session,
                    remoteAddress: remoteAddress, requestID: requestID)
            }
            let entry = Entry(
                requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id, upstream: upstream.index)
            var headers = headers(
                of: head, upgrade: upgrade, session: session, remoteAddress: remoteAddress, assertion: assertion, upstream: upstream, target: reached)
            headers.add(name: "X-Request-Id", value: entry.requestID)
            let upstream = HTTPRequestHead(version: .http1_1, method: head.method, uri: target, headers: headers)
            return upgrade ? .upgrade(upstream, entry) : .forward(upstream, entry)
        }
    }

    private func headers(
        of head: HTTPRequestHead, upgrade: Bool, session: ActiveSession?, remoteAddress: String?, assertion: String?, upstream: UpstreamRoute,
        target: RelayTarget
    ) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(head.headers.count + 8)
        headers.add(name: "Host", value: target.authority)
        let listed = HopByHopHeaders.listed(in: head.headers["connection"])
        for (name, value) in head.headers {
            switch ForwardedHeaderRule.disposition(of: name, listed: listed) {
            case .drop: continue
            case .keep: headers.add(name: name, value: value)
            case .filterCookie:
                if let kept = resolver.cookies.forwarded(value) {
                    headers.add(name: "Cookie", value: kept)
                }
            }
        }
        // The relay frames the body as the client did (the decoder has undone any chunking).
        if let length = head.headers.first(name: "content-length") {
            headers.add(name: "Content-Length", value: length)
        } else if head.headers.contains(name: "transfer-encoding") {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        } else if head.method == .POST || head.method == .PUT || head.method == .PATCH {
            headers.add(name: "Content-Length", value: "0")
        }
        if upgrade {
            // Hop-by-hop fields, dropped above; an upgrade is asked of the next hop again.
            headers.add(name: "Connection", value: "Upgrade")
            headers.add(name: "Upgrade", value: "websocket")
        }
        if settings.trustedProxies.isEmpty {
            if let remoteAddress { headers.add(name: "X-Forwarded-For", value: remoteAddress) }
            headers.add(name: "X-Forwarded-Proto", value: forwardedProto)
            headers.add(name: "X-Forwarded-Host", value: forwardedHost)
        } else {
            let forwarded = ForwardedFields(
                peer: remoteAddress, trusted: settings.trustedProxies.trusts(remoteAddress),
                incomingFor: ForwardedFields.joined(head.headers[canonicalForm: "x-forwarded-for"]),
                incomingProto: head.headers.first(name: "x-forwarded-proto"), incomingHost: head.headers.first(name: "x-forwarded-host"),
                publicProto: forwardedProto, publicHost: forwardedHost)
            if let value = forwarded.forwardedFor { headers.add(name: "X-Forwarded-For", value: value) }
            headers.add(name: "X-Forwarded-Proto", value: forwarded.proto)
            headers.add(name: "X-Forwarded-Host", value: forwarded.host)
        }
        if let session {
            BackendIdentityHeaders.add(for: session, backend: upstream.backend, assertion: assertion) { headers.add(name: $0, value: $1) }
        }
        return headers
    }

    /// The decision's facts of a `/v1/api/…` head: method, path and query below `/v1/api`, and the host.
    private func facts(of head: HTTPRequestHead, remoteAddress: String?, policy: AccessPolicy) -> APIDecision.Facts {
        let question = head.uri.utf8.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = question.map { Substring(head.uri[..<$0]) } ?? Substring(head.uri)
        var facts = APIDecision.Facts(
            method: head.method.rawValue, path: UpstreamPath.remainder(of: rawPath, droppingSegments: 2),
            query: question.map { head.uri[head.uri.index(after: $0)...] })
        // Read only when some rule names hosts: the relay's common case reads no more fields.
        if policy.namesHosts {
            facts.host = APIDecision.host(
                own: head.headers.first(name: "host"), forwarded: head.headers.first(name: "x-forwarded-host"),
                trusted: !settings.trustedProxies.isEmpty && settings.trustedProxies.trusts(remoteAddress))
        }
        return facts
    }

    /// What the decision reads of a head before its credential, each once: the access rules (SIGHUP may
    /// replace them; the facts and the decision must see the same), the facts, the route.
    private struct Routed {
        let policy: AccessPolicy
        let facts: APIDecision.Facts
        let route: APIDecision.Route
    }

    /// The head's route, when the relay reaches its upstream; `nil` when the router's client must carry it
    /// (an `https` upstream).
    private func routed(_ head: HTTPRequestHead, remoteAddress: String?) -> Routed? {
        let policy = access.current
        let facts = facts(of: head, remoteAddress: remoteAddress, policy: policy)
        let route = APIDecision.route(facts, upstreams: upstreams)
        guard targets[route.upstream.index] != nil else { return nil }
        return Routed(policy: policy, facts: facts, route: route)
    }

    /// The request's id (``RequestIdentifier``): a trusted proxy's `X-Request-Id`, else a new one.
    func requestID(of headers: HTTPHeaders, remoteAddress: String?) -> String {
        guard !settings.trustedProxies.isEmpty else { return RequestIdentifier.make() }
        return RequestIdentifier.of(
            incoming: headers.first(name: "x-request-id"), fromTrustedProxy: settings.trustedProxies.trusts(remoteAddress))
    }

    /// A field value without CR, LF, NUL or other control characters but tab (RFC 9110 §5.5).
    static func isSafeFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }

    // MARK: The answer

    /// The backend's response head for the client: hop-by-hop fields dropped.
    func clientHead(of head: HTTPResponseHead) -> HTTPResponseHead {
        var headers = head.headers
        if let onlyConnection = Self.onlyPlainConnectionField(head.headers) {
            // The usual case (`Connection: keep-alive` and no other hop-by-hop field): one removal, no lists.
            if onlyConnection { headers.remove(name: "connection") }
        } else {
            let listed = HopByHopHeaders.listed(in: head.headers["connection"])
            let dropped = head.headers.compactMap { HopByHopHeaders.contains($0.name, listed: listed) ? $0.name : nil }
            for name in dropped { headers.remove(name: name) }
        }
        if head.status == .switchingProtocols, let upgrade = head.headers.first(name: "upgrade") {
            // The switch itself is the answer to the client's upgrade: its fields go on.
            headers.add(name: "Connection", value: "Upgrade")
            headers.add(name: "Upgrade", value: upgrade)
        }
        return HTTPResponseHead(version: .http1_1, status: head.status, headers: headers)
    }

    /// Whether the only hop-by-hop field is at most one `Connection` of `keep-alive` or `close` (then: whether
    /// there is one); `nil` when anything else hop-by-hop is there.
    private static func onlyPlainConnectionField(_ headers: HTTPHeaders) -> Bool? {
        var connection = false
        for (name, value) in headers where HopByHopHeaders.isFixed(name) {
            guard !connection, name.utf8.count == 10, ASCII.equalsIgnoringCase(name, "connection") else { return nil }
            let token = ASCII.trimmed(Substring(value))
            guard ASCII.equalsIgnoringCase(token, "keep-alive") || ASCII.equalsIgnoringCase(token, "close") else { return nil }
            connection = true
        }
        return connection
    }

    /// A problem answer written by the relay itself (502, 504, 413, 400).
    func problemHead(_ error: GatehouseError, bodyLength: Int, close: Bool, requestID: String) -> HTTPResponseHead {
        var headers = HTTPHeaders(Problem.headers(error).map { ($0.name.rawName, $0.value) })
        headers.add(name: "X-Request-Id", value: requestID)
        headers.add(name: "Content-Length", value: String(bodyLength))
        if close { headers.add(name: "Connection", value: "close") }
        return HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: error.status), headers: headers)
    }
}
