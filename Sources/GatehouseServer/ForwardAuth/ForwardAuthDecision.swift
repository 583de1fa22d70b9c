import GatehouseConfiguration
import GatehouseCore

/// The one decision of `/v1/authz`, once its original request and its credential are known: the router's
/// ``AuthzController`` and the event-loop relay both ask it and carry out its plan (the proof to spend, the
/// assertion to sign, the access token to refresh, the answer's fields).
///
/// In order: the app the original host belongs to (`forward_auth.apps:`, else `backend`'s settings) chooses
/// what an allowed answer carries; the access rules judge the original method, path and host; a refusal for
/// want of a session (a 401) names the sign-in page that returns to the original request; an app that receives
/// the provider's access token needs it fresh first.
///
/// Pure and synchronous: table-tested without sockets (`ForwardAuthDecisionTests`).
enum ForwardAuthDecision {
    /// What to answer.
    enum Verdict: Sendable {
        /// 200 with the identity fields (``ForwardAuthAnswer/fields(session:backend:assertion:_:)``) of `session`
        /// (`nil`: a path the rules open to anyone), as `backend` asks; signing the assertion is the front end's.
        case allow(session: ActiveSession?, backend: ServerSettings.BackendSettings)
        /// The same, but the answer carries the provider's access token (`forward_access_token`): the front end
        /// refreshes it first when the refresh policy says so.
        case allowAfterRefresh(session: ActiveSession, backend: ServerSettings.BackendSettings)
        /// Answer with this error; `signIn`: the sign-in page a 401 names (``ForwardAuthAnswer/signInField``).
        case refuse(any Error, signIn: String?)
    }

    /// The decision as data (the proof's rule is ``APIDecision/Plan``'s: spent first, whatever the verdict; a
    /// replay voids the plan and the front end decides again with the refused credential).
    struct Plan: Sendable {
        let verdict: Verdict
        /// The credential's session, whatever the verdict: the audit line and the access log name it.
        let session: ActiveSession?
        /// The DPoP proof to record first; `nil` without one.
        let proof: DPoPProof?
        /// The app answered for (the access log's `upstream`); `nil` for `backend`'s settings.
        let app: GatewayConfiguration.ForwardAuthApp?
        /// The access rules' decision and the path they judged: the audit line.
        let access: (decision: AccessDecision, path: NormalizedPath)
    }

    /// The plan for `original` (its path normalized as `/v1/api` normalizes it: `path`) asked with `credential`.
    static func decide(
        _ original: ForwardAuthTarget, path: NormalizedPath, credential: CredentialOutcome, policy: AccessPolicy, upstreams: UpstreamTable,
        publicURL: String
    ) -> Plan {
        let (host, app, backend) = upstreams.forwardAuth(original, policy: policy)
        let session = credential.session
        let user = session.map { (provider: $0.provider, identity: $0.identity) }
        let decision = policy.decide(
            method: original.method, path: path.segments.map { Substring($0) }, host: host, user: user, authentication: session?.authentication)
        let verdict: Verdict
        if let refusal = decision.refusal(sessionRefusal: credential.refusal) {
            // The sign-in page only with a 401 (a token short of scope is 403, and a sign-in would not add it); a
            // store fault stays what it is.
            let signIn: String?
            switch decision {
            case .needsSession where (refusal as? GatehouseError)?.status == 401:
                signIn = ForwardAuthAnswer.signInURL(publicURL: publicURL, returningTo: original.target)
            case .stepUp(_, let requirement):
                // Signed in, not strongly or recently enough: the login of the session's provider that can meet the rule.
                signIn = session.map {
                    StepUpSignIn.url(publicURL: publicURL, provider: $0.provider, returningTo: original.target, requirement: requirement)
                }
            default:
                signIn = nil
            }
            verdict = .refuse(refusal, signIn: signIn)
        } else if let session, backend.forwardAccessToken {
            verdict = .allowAfterRefresh(session: session, backend: backend)
        } else {
            verdict = .allow(session: session, backend: backend)
        }
        return Plan(verdict: verdict, session: session, proof: credential.proof, app: app, access: (decision, path))
    }
}
