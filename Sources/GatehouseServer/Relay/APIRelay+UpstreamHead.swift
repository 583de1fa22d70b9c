import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// The one decision carried out: the route, the facts, the upstream head and its fields.
extension APIRelay {
    /// The one decision's plan (``APIDecision/Plan``) carried out — its proof aside (``decide(_:remoteAddress:memo:)``
    /// spends it): the audit line, and the upstream head with `assertion` (signed for the plan's audience), or the
    /// refusal.
    func carryOut(
        _ plan: APIDecision.Plan, _ head: HTTPRequestHead, _ routed: Routed, upgrade: Bool, assertion: String?, remoteAddress: String?
    ) -> Plan {
        let requestID = requestID(of: head.headers, remoteAddress: remoteAddress)
        if let judged = plan.access {
            judged.decision.audit(
                session: plan.session, method: routed.facts.method, path: judged.path, via: "api", requestID: requestID, metrics: metrics,
                logger: logger)
        }
        switch plan.verdict {
        case .refuse(let error):
            let answered = StepUpSignIn.redirecting(
                error, session: plan.session, method: routed.facts.method, fetchMode: head.headers.first(name: "sec-fetch-mode"),
                publicURL: settings.publicURL, target: Substring(head.uri))
            return refuse(answered, head, session: plan.session, remoteAddress: remoteAddress, requestID: requestID)
        case .forward(let forward):
            let session = forward.session
            if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > settings.maxBodyBytes {
                return refuse(
                    UpstreamProtocol.Failure.bodyTooLarge(limit: settings.maxBodyBytes).error, head, session: session, remoteAddress: remoteAddress,
                    requestID: requestID)
            }
            var entry = Entry(
                requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id, upstream: forward.upstream)
            var headers = headers(
                of: head, upgrade: upgrade, session: session, remoteAddress: remoteAddress, assertion: assertion, upstream: forward.upstream,
                target: routed.target)
            // Only with tracing on: off, the client's trace context is among the fields passed on as they came.
            if let tracing {
                entry.trace = .forwarded(tracing, head: head, upstream: Self.label(forward.upstream), upstreamHeaders: &headers)
            }
            headers.add(name: "X-Request-Id", value: entry.requestID)
            let upstream = HTTPRequestHead(version: .http1_1, method: head.method, uri: forward.target, headers: headers)
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
        var client = UpstreamProtocol.Client(connection: head.headers["connection"], peer: remoteAddress)
        if !settings.trustedProxies.isEmpty {
            client.forwardedFor = head.headers[canonicalForm: "x-forwarded-for"].map(String.init)
            client.forwardedProto = head.headers.first(name: "x-forwarded-proto")
            client.forwardedHost = head.headers.first(name: "x-forwarded-host")
        }
        upstreamProtocol.forwardedFields(of: head.headers, client: client, withholding: upstream.claimFields) {
            headers.add(name: $0, value: $1)
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
    /// replace them; the facts and the decision must see the same), the facts, the route, and the providers'
    /// generation the credential is judged under (all from one ``PolicySnapshot``).
    struct Routed {
        let policy: AccessPolicy
        let facts: APIDecision.Facts
        let route: APIDecision.Route
        /// Where the relay sends it: the route's upstream.
        let target: RelayTarget
        let providerGeneration: UInt64
    }

    /// The head's route, when the relay carries the request; `nil` when the router does, before anything is
    /// judged here (so nothing is judged twice): an `https` upstream, which the router's client reaches, or one
    /// that receives the provider's access token (`forward_access_token`), which the router refreshes before
    /// the call and, after a 401, once more before it sends the call again.
    func routed(_ head: HTTPRequestHead, remoteAddress: String?) -> Routed? {
        let snapshot = policy.current
        let policy = snapshot.access
        let facts = facts(of: head, remoteAddress: remoteAddress, policy: policy)
        let route = APIDecision.route(facts, upstreams: snapshot.upstreams)
        guard let target = route.upstream.relayTarget, !route.upstream.backend.forwardAccessToken else { return nil }
        return Routed(policy: policy, facts: facts, route: route, target: target, providerGeneration: snapshot.providerGeneration)
    }

    /// The request's id (``RequestIdentifier``): a trusted proxy's `X-Request-Id`, else a new one.
    func requestID(of headers: HTTPHeaders, remoteAddress: String?) -> String {
        guard !settings.trustedProxies.isEmpty else { return RequestIdentifier.make() }
        return RequestIdentifier.of(
            incoming: headers.first(name: "x-request-id"), fromTrustedProxy: settings.trustedProxies.trusts(remoteAddress))
    }
}
