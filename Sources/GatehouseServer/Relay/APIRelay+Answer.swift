import Foundation
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// The backend's answer as the client gets it, and the relay's own problem answers.
extension APIRelay {
    /// The backend's response head for the client: hop-by-hop fields dropped.
    static func clientHead(of head: HTTPResponseHead) -> HTTPResponseHead {
        var headers = head.headers
        if let onlyConnection = Self.onlyPlainConnectionField(head.headers) {
            // The usual case (`Connection: keep-alive` and no other hop-by-hop field): one removal, no lists.
            if onlyConnection { headers.remove(name: "connection") }
        } else {
            let listed = HopByHopHeaders.listed(in: head.headers["connection"])
            let dropped = head.headers.compactMap { UpstreamProtocol.passesToClient($0.name, listed: listed) ? nil : $0.name }
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
        Problem.head(error, bodyLength: bodyLength, close: close, requestID: requestID)
    }

    /// The access-log line (and the end of the trace) of a request the relay forwarded, whichever front end served it
    /// (``APIRelayHandler``, ``RelayLane``).
    func recordRelayed(_ entry: Entry, status: Int, started: ContinuousClock.Instant) {
        let upstream = Self.label(entry.upstream)
        accessLog.record(
            method: entry.method, route: Self.route, status: status, duration: ContinuousClock.now - started,
            provider: entry.provider, sessionID: entry.sessionID, requestID: entry.requestID, upstream: upstream,
            traceID: entry.finishTrace(status: status, upstream: upstream))
    }
}
