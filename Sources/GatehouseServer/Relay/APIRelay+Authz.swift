import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// `/v1/authz` on the relay: the one decision (``ForwardAuthDecision``) asked and carried out as
/// ``AuthzController`` carries it out — from memory on the loop, else once off it; never judged twice.
extension APIRelay {
    /// What the relay reads of a forward-auth head before its credential.
    private struct AuthzQuestion {
        let requestID: String
        let original: ForwardAuthTarget
        let path: NormalizedPath
        let authorization: String?
        /// The request a DPoP proof must name (the original one).
        let proofTarget: DPoPVerifier.Target
    }

    /// `/v1/authz` decided from memory — the session in the store's cache or this connection's ``CredentialMemo``
    /// (or none), a cached assertion: `.answer`, `.refuse`, or `.resolveAsync` when the store must be read, a DPoP
    /// proof checked, an assertion signed or a forwarded access token refreshed (``authorizeAsync(_:remoteAddress:)``).
    /// `nil` when the request is the router's (not HTTP/1.1, a body, `Expect`, an upgrade).
    func authorize(_ head: HTTPRequestHead, remoteAddress: String?, memo: inout CredentialMemo?) -> Plan? {
        let question: AuthzQuestion
        switch self.question(head, remoteAddress: remoteAddress) {
        case nil: return nil
        case .failure(let refusal): return refusal.decision
        case .success(let asked): question = asked
        }
        let now = clock.now()
        // Read once: the rules, the apps and the providers' generation the credential is judged under.
        let snapshot = policy.current
        let credential: CredentialOutcome
        var kept: CredentialMemo?
        do {
            let presented = try presented(head, authorization: question.authorization, method: "GET", proofTarget: question.proofTarget)
            guard
                let found = resolver.credentialFromMemory(
                    authorization: question.authorization, memo: memo, now: now, providerGeneration: snapshot.providerGeneration,
                    presented: { presented })
            else { return .resolveAsync }
            (credential, kept) = found
        } catch {
            credential = .refused(error)
        }
        let plan = decide(question, credential: credential, snapshot: snapshot)
        // Spending a proof leaves the loop: the async path does it, with everything else the plan asks.
        guard plan.proof == nil else { return .resolveAsync }
        switch plan.verdict {
        case .allowAfterRefresh: return .resolveAsync
        case .refuse(let error, let signIn): return refused(error, question, head, plan: plan, signIn: signIn)
        case .allow(let session, let backend):
            var assertion: String?
            if let session, backend.assertion {
                if let remembered = kept?.assertion(for: backend.audience) {
                    assertion = remembered
                } else if let (signed, until) = signer.cachedAssertionEntry(for: session, audience: backend.audience, now: now) {
                    assertion = signed
                    kept = kept?.with(assertion: signed, audience: backend.audience, reusedUntil: until)
                } else {
                    return .resolveAsync
                }
            }
            if let kept { memo = kept }
            return allowed(session, backend: backend, assertion: assertion, question, head, plan: plan)
        }
    }

    /// `/v1/authz` decided off the loop: the credential read (the store, a provider token, a DPoP proof naming the
    /// original request), the proof spent, the access token refreshed, the assertion signed. Never `.resolveAsync`.
    func authorizeAsync(_ head: HTTPRequestHead, remoteAddress: String?) async -> Plan {
        let question: AuthzQuestion
        switch self.question(head, remoteAddress: remoteAddress) {
        case nil: return .pass
        case .failure(let refusal): return refusal.decision
        case .success(let asked): question = asked
        }
        // Read before the credential: the rules a provider token is judged by are never older than its verdict.
        let snapshot = policy.current
        let credential: CredentialOutcome
        do {
            let presented = try presented(head, authorization: question.authorization, method: "GET", proofTarget: question.proofTarget)
            credential = await resolver.spent(resolver.credential(presented, providerTokens: true))
        } catch {
            credential = .refused(error)
        }
        let plan = decide(question, credential: credential, snapshot: snapshot)
        var (session, backend): (ActiveSession?, ServerSettings.BackendSettings)
        switch plan.verdict {
        case .refuse(let error, let signIn): return refused(error, question, head, plan: plan, signIn: signIn)
        case .allow(let allowed, let settings): (session, backend) = (allowed, settings)
        case .allowAfterRefresh(let allowed, let settings): (session, backend) = (allowed, settings)
        }
        do {
            if case .allowAfterRefresh = plan.verdict, let current = session { session = try await refreshed(current) }
            var assertion: String?
            if let session, backend.assertion { assertion = try await signer.assertion(for: session, audience: backend.audience, now: clock.now()) }
            return allowed(session, backend: backend, assertion: assertion, question, head, plan: plan)
        } catch {
            return refused(error, question, head, plan: plan, signIn: nil)
        }
    }

    /// A refusal before the credential: the decision that answers it.
    private struct EarlyRefusal: Error {
        let decision: Plan
    }

    /// The question a forward-auth head asks, in the router's order (the head's limits, the forward-auth fields,
    /// the original request and its path); `nil` when it is the router's.
    private func question(_ head: HTTPRequestHead, remoteAddress: String?) -> Result<AuthzQuestion, EarlyRefusal>? {
        guard head.version == .http1_1, Self.isRouted(head.method), ForwardAuthTarget.isAuthz(head.uri) else { return nil }
        let scan = HeadScan(head.headers, forwardAuth: true)
        // No body, no `Expect`, no upgrade: anything else is the router's.
        guard !scan.expect, scan.upgrades == 0, scan.transferEncodings == 0, !scan.announcesBody else { return nil }
        let fields = scan.forwardAuthFields
        let requestID = requestID(of: head.headers, remoteAddress: remoteAddress)
        func early(_ error: any Error) -> Result<AuthzQuestion, EarlyRefusal> {
            var entry = Entry(requestID: requestID, method: head.method.rawValue, provider: nil, sessionID: nil)
            entry.route = Self.authzRoute
            if let tracing { entry.trace = .answered(tracing, head: head, verdict: "refuse") }
            return .failure(EarlyRefusal(decision: .refuse(ErrorMapping.problem(for: error, logger: logger), entry)))
        }
        if let refusal = RequestHeadLimits.refusal(
            hosts: scan.hosts, targetBytes: head.uri.utf8.count, fieldBytes: scan.fieldBytes, settings: settings)
        {
            return early(refusal)
        }
        if let repeated = scan.repeatedForwardAuthField { return early(GatehouseError.invalidRequest("\(repeated) may be sent only once.")) }
        do {
            let original = try ForwardAuthTarget(
                forwardedMethod: fields["x-forwarded-method"], forwardedURI: fields["x-forwarded-uri"],
                originalMethod: fields["x-original-method"], originalURI: fields["x-original-uri"], originalURL: fields["x-original-url"],
                ownMethod: head.method.rawValue, ownTarget: head.uri, ownHost: scan.host,
                forwardedHost: fields["x-forwarded-host"])
            let path = try UpstreamPath.normalized(original.path, droppingSegments: 0)
            let proofTarget = original.proofTarget(
                originalURL: fields["x-original-url"], forwardedProto: fields["x-forwarded-proto"], forwardedHost: fields["x-forwarded-host"],
                ownHost: scan.host, publicURL: settings.publicURL)
            return .success(
                AuthzQuestion(requestID: requestID, original: original, path: path, authorization: scan.authorization, proofTarget: proofTarget))
        } catch {
            return early(error)
        }
    }

    private func decide(_ question: AuthzQuestion, credential: CredentialOutcome, snapshot: PolicySnapshot) -> ForwardAuthDecision.Plan {
        ForwardAuthDecision.decide(
            question.original, path: question.path, credential: credential, policy: snapshot.access, upstreams: snapshot.upstreams,
            publicURL: settings.publicURL)
    }

    private func audit(_ question: AuthzQuestion, plan: ForwardAuthDecision.Plan) {
        plan.access.decision.audit(
            session: plan.session, method: question.original.method, path: question.path, via: "authz", requestID: question.requestID,
            metrics: metrics,
            logger: logger)
    }

    private func entry(
        _ question: AuthzQuestion, _ head: HTTPRequestHead, session: ActiveSession?, plan: ForwardAuthDecision.Plan, verdict: String
    ) -> Entry {
        var entry = Entry(requestID: question.requestID, method: head.method.rawValue, provider: session?.provider, sessionID: session?.id)
        entry.route = Self.authzRoute
        entry.app = plan.app?.name
        if let tracing { entry.trace = .answered(tracing, head: head, verdict: verdict) }
        return entry
    }

    private func refused(
        _ error: any Error, _ question: AuthzQuestion, _ head: HTTPRequestHead, plan: ForwardAuthDecision.Plan, signIn: String?
    ) -> Plan {
        audit(question, plan: plan)
        var entry = entry(question, head, session: plan.session, plan: plan, verdict: "refuse")
        if let signIn { entry.answerFields = [(ForwardAuthAnswer.signInField, signIn)] }
        return .refuse(ErrorMapping.problem(for: error, logger: logger), entry)
    }

    private func allowed(
        _ session: ActiveSession?, backend: ServerSettings.BackendSettings, assertion: String?, _ question: AuthzQuestion, _ head: HTTPRequestHead,
        plan: ForwardAuthDecision.Plan
    ) -> Plan {
        audit(question, plan: plan)
        var headers = HTTPHeaders()
        ForwardAuthAnswer.fields(session: session, backend: backend, assertion: assertion) { headers.add(name: $0, value: $1) }
        headers.add(name: "Content-Length", value: "0")
        headers.add(name: "X-Request-Id", value: question.requestID)
        if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
        return .answer(
            HTTPResponseHead(version: .http1_1, status: .ok, headers: headers), entry(question, head, session: session, plan: plan, verdict: "allow"))
    }

    /// The session with its provider's access token refreshed when the refresh policy says so (the app receives it).
    private func refreshed(_ session: ActiveSession) async throws -> ActiveSession {
        guard session.credential.isRefreshable, let provider = providers.provider(session.provider) as? any RefreshingProvider,
            refreshPolicy.needsRefresh(session.credential, now: clock.now())
        else { return session }
        return try await refresher.refresh(session, provider: provider, force: false)
    }
}
