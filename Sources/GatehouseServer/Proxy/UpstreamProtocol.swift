import GatehouseConfiguration
import GatehouseCore
import HTTPTypes

/// The protocol towards the upstreams of `/v1/api`, written once for both transports — the event-loop relay's
/// NIO heads and the router's AsyncHTTPClient requests — which only adapt their header types: the routes and
/// their methods, the forwarded request's fields, the answer's fields, and what an upstream failure is.
struct UpstreamProtocol: Sendable {
    /// The route template of `/v1/api` in the access log and the metrics.
    static let route = "/v1/api/**"
    /// The route template of `/v1/authz`.
    static let authzRoute = "/v1/authz"
    /// The methods `/v1/api` and `/v1/authz` have.
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    /// Whether `/v1/api` and `/v1/authz` have the method (upper case, as sent).
    static func isRouted(_ method: String) -> Bool {
        switch method {
        case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS": true
        default: false
        }
    }

    /// Strips the session cookie: the same parser that finds it (``SessionCookieParser``).
    let sessionCookie: SessionCookieParser
    /// Whose `X-Forwarded-*` are continued rather than replaced.
    let trustedProxies: TrustedProxies
    /// Worked out once, not per request: what every upstream request says about the gateway.
    let publicProto: String
    let publicHost: String

    init(settings: ServerSettings) {
        sessionCookie = SessionCookieParser(name: settings.cookie.name)
        trustedProxies = settings.trustedProxies
        publicProto = settings.publicURL.hasPrefix("https") ? "https" : "http"
        publicHost = settings.publicAuthority
    }

    /// What the client sent that the forwarded fields depend on, read by the transport from its own header type.
    struct Client {
        /// The `Connection` values.
        var connection: [String]
        /// The `X-Forwarded-For` values (read only with trusted proxies).
        var forwardedFor: [String] = []
        var forwardedProto: String? = nil
        var forwardedHost: String? = nil
        /// The peer's address.
        var peer: String?
    }

    /// The fields the upstream gets of the client's request, through `add`: the client's fields as
    /// ``ForwardedHeaderRule`` lets them pass (the session cookie taken out of `Cookie`), then `X-Forwarded-For`,
    /// `X-Real-IP`, `X-Forwarded-Proto` and `X-Forwarded-Host` (``ForwardedFields``: the peer, continued from a
    /// trusted proxy). `Host`, the framing, the request id and the identity are the caller's. The client's own
    /// copies of the fields upstreams get from the gateway's claims (`withholding`: ``UpstreamRoute/claimFields``)
    /// are dropped too, whether or not the request has a session.
    func forwardedFields<Fields: Sequence>(
        of fields: Fields, client: Client, withholding claimFields: [String] = [], _ add: (String, String) -> Void
    ) where Fields.Element == (name: String, value: String) {
        let listed = HopByHopHeaders.listed(in: client.connection)
        for (name, value) in fields {
            if !claimFields.isEmpty, claimFields.contains(where: { ASCII.equalsIgnoringCase(name, $0) }) { continue }
            switch ForwardedHeaderRule.disposition(of: name, listed: listed) {
            case .drop: continue
            case .keep: add(name, value)
            case .filterCookie:
                if let kept = sessionCookie.forwarded(value) { add("Cookie", kept) }
            }
        }
        // The host the client reached is the gateway's public one, whatever `Host` the client sent, unless a
        // trusted proxy in front says otherwise.
        guard !trustedProxies.isEmpty else {
            if let peer = client.peer {
                add("X-Forwarded-For", peer)
                add("X-Real-IP", peer)
            }
            add("X-Forwarded-Proto", publicProto)
            add("X-Forwarded-Host", publicHost)
            return
        }
        let forwarded = ForwardedFields(
            peer: client.peer, proxies: trustedProxies, incomingFor: ForwardedFields.joined(client.forwardedFor),
            incomingProto: client.forwardedProto, incomingHost: client.forwardedHost, publicProto: publicProto, publicHost: publicHost)
        if let value = forwarded.forwardedFor { add("X-Forwarded-For", value) }
        if let value = forwarded.realIP { add("X-Real-IP", value) }
        add("X-Forwarded-Proto", forwarded.proto)
        add("X-Forwarded-Host", forwarded.host)
    }

    /// Whether a field of the upstream's answer reaches the client: not hop-by-hop (`listed`: what the answer's
    /// `Connection` lists, ``HopByHopHeaders/listed(in:)``), and no `Set-Cookie` of a provider's API (`dropCookies`).
    static func passesToClient(_ name: String, listed: [String], dropCookies: Bool = false) -> Bool {
        if HopByHopHeaders.contains(name, listed: listed) { return false }
        return !(dropCookies && ASCII.equalsIgnoringCase(name, "set-cookie"))
    }

    /// How an upstream call failed, whichever transport made it: the one error the client gets and whether it
    /// counts against the upstream (`gatehouse_upstream_errors_total`, `gatehouse_upstream_failures_total`).
    enum Failure: Sendable {
        /// No connection, or it broke before the answer.
        case unreachable
        /// No answer within the upstream's `timeout_seconds`.
        case timeout
        /// A `101` that completes no WebSocket handshake, or an interim status as the final answer.
        case invalidSwitch
        /// The client's body outgrew `max_body_bytes` on the way.
        case bodyTooLarge(limit: Int)
        /// The body could not be sent again whole after a reused connection was lost.
        case replayTooLarge

        var error: GatehouseError {
            switch self {
            case .unreachable: GatehouseError.badGateway("The upstream could not be reached.")
            case .timeout: GatehouseError.gatewayTimeout("The upstream did not answer in time.")
            case .invalidSwitch: GatehouseError.badGateway("The upstream switched protocols or gave no final answer.")
            case .bodyTooLarge(let limit): GatehouseError.payloadTooLarge("The request body exceeds \(limit) bytes.")
            case .replayTooLarge: GatehouseError.badGateway("The request body outgrew the replay limit while it was being sent again.")
            }
        }

        /// Whether it counts as the upstream's failure in the metrics (the client's own excess does not).
        var isUpstreams: Bool {
            switch self {
            case .unreachable, .timeout, .invalidSwitch, .replayTooLarge: true
            case .bodyTooLarge: false
            }
        }
    }
}
