import NIOCore
import NIOHTTP1

extension APIRelayHandler.StateMachine {
    /// One relayed request: what the relay knows of it from its decision to its end, whatever its ``Phase``. It
    /// lives inside ``State/relaying(_:_:)`` and nowhere else, so it cannot outlive its state.
    ///
    /// A class: every event of the machine reads the state, and a reference is one retain where a copy of the
    /// exchange was one per field (the heads' fields, the entry's strings). Only the machine changes it, in the
    /// state it lives in, so no one sees it change under them.
    final class Exchange {
        /// Tells the answer of a connection attempt for this exchange from one for an exchange that ended.
        let id: Int
        /// The head the backend gets.
        let head: HTTPRequestHead
        /// For the access log.
        let entry: APIRelay.Entry
        let started: ContinuousClock.Instant
        /// The status the client got (0 until the answer's head went out).
        var status = 0
        let idempotent: Bool
        /// The head says how a body is framed (`Content-Length` or `Transfer-Encoding`): without, no body part may
        /// follow it on the backend connection.
        let framed: Bool
        /// The client keeps the connection after this exchange (else it is closed after the answer).
        let clientKeepAlive: Bool
        /// A WebSocket handshake: a `101` that completes it (``WebSocketHandshake``) turns the exchange into a tunnel.
        let upgrade: Bool
        /// The `Sec-WebSocket-Accept` the backend must send with its `101`.
        let expectedAccept: String?
        /// Connections the request was sent on.
        var attempts = 0
        /// Every body part so far, while small enough to send again; `nil` once it is not.
        var kept: [ByteBuffer]? = []
        var keptBytes = 0
        var bodyBytes = 0
        var requestComplete = false
        /// The final answer lets the backend connection serve another exchange.
        var upstreamKeepAlive = true

        init(id: Int, head: HTTPRequestHead, entry: APIRelay.Entry, clientKeepAlive: Bool, upgrade: Bool, started: ContinuousClock.Instant) {
            self.id = id
            self.head = head
            self.entry = entry
            self.started = started
            self.clientKeepAlive = clientKeepAlive
            self.upgrade = upgrade
            expectedAccept = upgrade ? WebSocketHandshake.expectedAccept(of: head) : nil
            framed = head.headers.contains(name: "content-length") || head.headers.contains(name: "transfer-encoding")
            switch head.method {
            case .GET, .HEAD, .PUT, .DELETE, .OPTIONS, .TRACE: idempotent = true
            default: idempotent = false
            }
        }

        /// The access-log line it gets if it ends now.
        var record: Record { Record(entry: entry, status: status, started: started) }
    }
}
