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

    /// `/v1/authz` answered from memory — the session in the store's cache or this connection's ``CredentialMemo``
    /// (or none), a cached assertion — with the one decision (``ForwardAuthDecision``) as ``AuthzController``
    /// answers it, refusals included; `nil` for the router when the store must be read, a DPoP proof checked, an
    /// assertion signed or a forwarded access token refreshed, or the request has a body.
    func authorize(_ head: HTTPRequestHead, remoteAddress: String?, memo: inout CredentialMemo?) -> AuthzAnswer? {
        guard head.version == .http1_1, Self.isRouted(head.method), ForwardAuthTarget.isAuthz(head.uri) else { return nil }
        let scan = HeadScan(head.headers, forwardAuth: true)
        // No body, no `Expect`, no upgrade: anything else is the router's.
        guard !scan.expect, scan.upgrades == 0, scan.transferEncodings == 0, !scan.announcesBody else { return nil }
        let (authorization, fields) = (scan.authorization, scan.forwardAuthFields)
        let requestID = requestID(of: head.headers, remoteAddress: remoteAddress)
        func refused(_ error: any Error, session: ActiveSession? = nil, signIn: String? = nil, app: String? = nil) -> AuthzAnswer {
            let entry = Entry(requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
            let fields = signIn.map { [(ForwardAuthAnswer.signInField, $0)] } ?? []
            return .refused(ErrorMapping.problem(for: error, logger: logger), fields: fields, entry, app: app)
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
        let now = clock.now()
        let credential: CredentialOutcome
        var kept: CredentialMemo?
        do {
            // GET: no X-CSRF is asked of a cookie here (see ``AuthzController``).
            let presented = try presented(head, authorization: authorization, method: "GET")
            // A proof names the original request, which the router works out.
            if presented?.presentation == .dpop { return nil }
            guard let found = resolver.credentialFromMemory(presented, memo: memo, now: now) else { return nil }
            (credential, kept) = found
        } catch {
            credential = .refused(error)
        }
        let snapshot = policy.current
        let plan = ForwardAuthDecision.decide(
            original, path: path, credential: credential, policy: snapshot.access, upstreams: snapshot.upstreams, publicURL: settings.publicURL)
        func audit() {
            plan.access.decision.audit(session: plan.session, method: original.method, path: path, via: "authz", requestID: requestID, metrics: metrics, logger: logger)
        }
        let (session, backend): (ActiveSession?, ServerSettings.BackendSettings)
        switch plan.verdict {
        case .allowAfterRefresh:
            // A forwarded access token is refreshed first: the router's.
            return nil
        case .refuse(let error, let signIn):
            audit()
            return refused(error, session: plan.session, signIn: signIn, app: plan.app?.name)
        case .allow(let allowed, let settings):
            (session, backend) = (allowed, settings)
        }
        var assertion: String?
        if let session, backend.assertion {
            if let remembered = kept?.assertion(for: backend.audience) {
                assertion = remembered
            } else if let (signed, until) = signer.cachedAssertionEntry(for: session, audience: backend.audience, now: now) {
                assertion = signed
                kept = kept?.with(assertion: signed, audience: backend.audience, reusedUntil: until)
            } else {
                return nil
            }
        }
        audit()
        if let kept { memo = kept }
        var headers = HTTPHeaders()
        ForwardAuthAnswer.fields(session: session, backend: backend, assertion: assertion) { headers.add(name: $0, value: $1) }
        let entry = Entry(requestID: requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "X-Request-Id", value: entry.requestID)
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        return .allowed(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers), entry, app: plan.app?.name)
    }
}
