import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// `/v1/authz` answered by the relay from memory (``APIRelay/authorize(_:remoteAddress:memo:)``).
extension APIRelay {
    /// What the relay answers to a forward-auth question itself.
    enum AuthzAnswer {
        /// 200 with the identity fields; `app`: the name of the app of `forward_auth.apps:` answered for (the
        /// access log's `upstream`), `nil` for `backend`'s settings.
        case allowed(HTTPResponseHead, Entry, app: String?)
        /// A problem, with fields of its own (the sign-in page of a 401).
        case refused(GatehouseError, fields: [(String, String)], Entry, app: String?)
    }

    /// `/v1/authz` answered from memory — the session in the store's cache or this connection's ``Memo`` (or
    /// none), the access rules, a cached assertion — as ``AuthzController`` answers it, refusals included;
    /// `nil` for the router when the store must be read, a DPoP proof checked, an assertion signed or a
    /// forwarded access token refreshed, or the request has a body.
    func authorize(_ head: HTTPRequestHead, remoteAddress: String?, memo: inout Memo?) -> AuthzAnswer? {
        guard head.version == .http1_1, Self.isRouted(head.method), ForwardAuthTarget.isAuthz(head.uri) else { return nil }
        let scan = HeadScan(head.headers, forwardAuth: true)
        // No body, no `Expect`, no upgrade: anything else is the router's.
        guard !scan.expect, scan.upgrades == 0, scan.transferEncodings == 0, !scan.announcesBody else { return nil }
        let (authorization, fields) = (scan.authorization, scan.forwardAuthFields)
        let requestID = requestID(of: head.headers, remoteAddress: remoteAddress)
        // Known once the original host is.
        var app: GatewayConfiguration.ForwardAuthApp?
        func refused(_ error: any Error, session: ActiveSession? = nil, fields: [(String, String)] = []) -> AuthzAnswer {
            let entry = Entry(requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
            return .refused(ErrorMapping.problem(for: error, logger: logger), fields: fields, entry, app: app?.name)
        }
        // In the router's order: the head's limits, the forward-auth fields, the original path, the session.
        if let refusal = RequestHeadLimits.refusal(hosts: scan.hosts, targetBytes: head.uri.utf8.count, fieldBytes: scan.fieldBytes, settings: settings) {
            return refused(refusal)
        }
        if let repeated = scan.repeatedForwardAuthField { return refused(GatehouseError.invalidRequest("\(repeated) may be sent only once.")) }
        let original: ForwardAuthTarget
        let path: NormalizedPath
        do {
            original = try ForwardAuthTarget(
                forwardedMethod: fields["x-forwarded-method"], forwardedURI: fields["x-forwarded-uri"],
                originalMethod: fields["x-original-method"], originalURI: fields["x-original-uri"], originalURL: fields["x-original-url"],
                ownMethod: head.method.rawValue, ownTarget: head.uri, ownHost: scan.host,
                forwardedHost: fields["x-forwarded-host"])
            path = try UpstreamPath.normalized(original.path, droppingSegments: 0)
        } catch {
            return refused(error)
        }
        let policy = access.current
        // The answer carries what the app of the original host receives (`backend`'s settings for any other host).
        let (host, forApp, backend) = upstreams.current.forwardAuth(original, policy: policy)
        app = forApp
        // A forwarded access token is refreshed first: the router's.
        guard !backend.forwardAccessToken else { return nil }

        var session: ActiveSession?
        var assertion: String?
        var sessionRefusal: (any Error)?
        let now = clock.now()
        let audience = backend.assertion ? backend.audience : nil
        if let kept = remembered(memo, authorization: authorization, audience: audience, now: now) {
            (session, assertion) = (kept.session, kept.assertion)
        } else {
            do {
                // GET: no X-CSRF is asked of a cookie here (see ``AuthzController``).
                if let (token, presentation) = try credential(of: head, authorization: authorization, method: "GET") {
                    // From memory (a session, or a provider token's cached verdict), or the router reads the store,
                    // verifies the provider token or checks the proof.
                    switch fromMemory(token: token, presentation: presentation, authorization: authorization, audience: audience, now: now) {
                    case .found(let found, let keep):
                        (session, assertion) = (found.session, found.assertion)
                        if keep { memo = found }
                    case .refused(let refusal): sessionRefusal = refusal
                    case .unknown: return nil
                    }
                }
            } catch {
                sessionRefusal = error
            }
        }
        let user = session.map { (provider: $0.provider, identity: $0.identity) }
        let decision = policy.decide(method: original.method, path: path.segments.map { Substring($0) }, host: host, user: user)
        decision.audit(session: session, method: original.method, path: path, via: "authz", requestID: requestID, metrics: metrics, logger: logger)
        if let refusal = decision.refusal(sessionRefusal: sessionRefusal) {
            // As the router: the sign-in page only with a 401 (a token short of scope is 403, and a sign-in would not add it).
            let signsIn = decision == .needsSession && (refusal as? GatehouseError)?.status == 401
            let signIn =
                signsIn ? [(ForwardAuthAnswer.signInField, ForwardAuthAnswer.signInURL(publicURL: settings.publicURL, returningTo: original.target))] : []
            return refused(refusal, session: session, fields: signIn)
        }
        var headers = HTTPHeaders()
        ForwardAuthAnswer.fields(session: session, backend: backend, assertion: assertion) { headers.add(name: $0, value: $1) }
        let entry = Entry(requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "X-Request-Id", value: entry.requestID)
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        return .allowed(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers), entry, app: app?.name)
    }
}
