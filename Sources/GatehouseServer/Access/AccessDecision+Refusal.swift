import GatehouseCore
import Logging

/// What a decision of the access policy means for the client, the one mapping of `/v1/api` (relay and
/// router) and `/v1/authz`: `needsSession` is 401 — the reason the presented credential was refused when
/// there was one (`invalid_token` for a bound token without its proof, an expired session…), else
/// `invalid_session` — and `deny` is 403 `access_denied` naming the rule, never the identity.
extension AccessDecision {
    /// The error to answer with; `nil` for `allow`. `sessionRefusal` is why the presented credential gave no
    /// session, when it gave none.
    func refusal(sessionRefusal: (any Error)?) -> (any Error)? {
        switch self {
        case .allow: nil
        case .needsSession: sessionRefusal ?? GatehouseError.invalidSession()
        case .deny(let rule): GatehouseError.forbidden(.accessDenied, "The access rule '\(rule)' does not let this session through.")
        case .stepUp(let rule, let requirement): GatehouseError.stepUpRequired(rule: rule, requirement)
        }
    }

    /// Counts a denial (`gatehouse_access_denials_total{rule}`) and writes its audit line; nothing otherwise.
    /// - Parameters:
    ///   - via: `api` or `authz`, the route that asked.
    ///   - requestID: for a logger that does not carry the request's id already (the relay's).
    func audit(
        session: ActiveSession?, method: String, path: NormalizedPath, via: String, requestID: String? = nil, metrics: GatewayMetrics, logger: Logger
    ) {
        let rule: String
        switch self {
        case .allow, .needsSession: return
        case .deny(let denied): rule = denied
        case .stepUp(let asking, _):
            var metadata: Logger.Metadata = [
                "rule": "\(asking)", "provider": "\(session?.provider ?? "")", "session": "\(session?.id ?? "")", "method": "\(method)",
                "path": "\(path.encoded)", "via": "\(via)",
            ]
            if let requestID { metadata["request_id"] = "\(requestID)" }
            logger.info("step-up required", metadata: metadata)
            return
        }
        metrics.accessDenied(rule: rule)
        var metadata: Logger.Metadata = [
            "rule": "\(rule)", "provider": "\(session?.provider ?? "")", "session": "\(session?.id ?? "")", "method": "\(method)",
            "path": "\(path.encoded)", "via": "\(via)",
        ]
        if let requestID { metadata["request_id"] = "\(requestID)" }
        logger.notice("access denied", metadata: metadata)
    }
}
