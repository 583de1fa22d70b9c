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

    /// Whether the head is one the relay may take, judged in one pass over the fields, and its
    /// `Authorization` value (several fields joined by `, `, as HTTP fields are read).
    func claim(_ head: HTTPRequestHead) -> (Claim, authorization: String?) {
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
    func credential(
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
}
