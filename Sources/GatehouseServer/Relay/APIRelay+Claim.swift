import Foundation
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Whether the relay takes a head, from one scan of its fields, and the credential it presents.
extension APIRelay {
    /// How the relay may take a request.
    enum Claim {
        /// Not the relay's: another route, or what only the router does (CORS, `Expect`, HTTP/1.0, upgrades
        /// other than WebSocket, a credential to refresh…).
        case none
        /// Refused by the request head's limits, as `RequestHeadMiddleware` refuses them on the router.
        case refuse(GatehouseError)
        case plain
        case upgrade
    }

    /// Whether the head is one the relay may take, judged from the one scan of its fields
    /// (``HeadScan``), and its `Authorization` value.
    func claim(_ head: HTTPRequestHead) -> (Claim, authorization: String?) {
        guard head.version == .http1_1, head.uri.hasPrefix(Self.prefix), Self.isRouted(head.method) else { return (.none, nil) }
        let scan = HeadScan(head.headers, forwardAuth: false)
        guard !scan.expect, !scan.invalidContentLength, !scan.notOnlyChunked, scan.contentLengths <= 1 else { return (.none, nil) }
        // The router answers CORS (preflights and `Origin`), its refusals by the head's limits included: a browser
        // reads a 431 without `Access-Control-Allow-Origin` as a CORS failure, not as the 431 it is.
        if scan.upgrades == 0, scan.origins > 0, !settings.corsAllowedOrigins.isEmpty { return (.none, nil) }
        if let refusal = RequestHeadLimits.refusal(
            hosts: scan.hosts, targetBytes: head.uri.utf8.count, fieldBytes: scan.fieldBytes, settings: settings)
        {
            return (.refuse(refusal), nil)
        }
        if scan.upgrades == 0 { return (.plain, scan.authorization) }
        // Only a WebSocket handshake is upgraded; anything else that asks for a new protocol goes to the router.
        guard scan.upgrades == 1, scan.websocket, scan.connectionUpgrade, head.method == .GET, scan.contentLengths == 0, scan.transferEncodings == 0,
            scan.origins <= 1
        else { return (.none, nil) }
        return (.upgrade, scan.authorization)
    }

    /// The credential the request presents (``SessionResolver/presented(authorization:cookies:csrf:method:proofs:target:)``);
    /// `nil` when none. A browser sends the cookie on any site's WebSocket: on an upgrade only the gateway's own
    /// origins may present it so, and from anywhere else the cookie is no credential. `method`: the one the
    /// cookie's `X-CSRF` rule judges (`/v1/authz` asks none: `GET`).
    /// `proofTarget`: the request a DPoP proof names (`nil`: this one).
    func presented(
        _ head: HTTPRequestHead, authorization: String?, upgrade: Bool = false, method: String? = nil, proofTarget: DPoPVerifier.Target? = nil
    ) throws -> PresentedCredential? {
        // Read only without `Authorization`, which wins over a cookie.
        let cookies = authorization == nil ? head.headers["cookie"] : []
        if authorization == nil {
            guard !cookies.isEmpty, resolver.cookies.token(in: cookies) != nil else { return nil }
            if upgrade {
                guard let origin = head.headers.first(name: "origin"), upgradeOrigins.contains(ASCII.lowercased(origin)) else { return nil }
            }
        }
        return try resolver.presented(
            authorization: authorization, cookies: cookies, csrf: head.headers.first(name: "x-csrf"), method: method ?? head.method.rawValue,
            proofs: head.headers["dpop"], target: proofTarget ?? resolver.proofTarget(method: head.method.rawValue, path: Self.path(of: head.uri)))
    }

    /// The path of an origin-form target, without its query.
    static func path(of uri: String) -> Substring {
        uri[..<(uri.utf8.firstIndex(of: UInt8(ascii: "?")) ?? uri.endIndex)]
    }
}
