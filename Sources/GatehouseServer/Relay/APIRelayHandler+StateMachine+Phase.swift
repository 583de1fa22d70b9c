import NIOCore

extension APIRelayHandler.StateMachine {
    /// Where a relayed exchange is, with what only that step has: whether a backend connection is held, whether
    /// the answer started and whether it switches protocols are these cases, not flags beside the exchange.
    enum Phase {
        /// No backend connection yet: the first attempt, with the body parts read meanwhile (`unsent`), or a
        /// new connection to send the request again (the body kept in the exchange goes then).
        case connecting(unsent: [ByteBuffer])
        /// The request goes out on `link`; the backend must start its answer by `deadline`
        /// (`upstream_timeout_seconds` after the request went out).
        case awaiting(Link, deadline: NIODeadline)
        /// Something of the answer went to the client (a `1xx`, or the final head): its failure can only end
        /// the client's connection.
        case streaming(Link)
        /// The backend's `101` completed the WebSocket handshake: the tunnel opens at the end of its head.
        case switching(Link)

        /// The backend connection, once one is ready.
        var link: Link? {
            switch self {
            case .connecting: nil
            case .awaiting(let link, _), .streaming(let link), .switching(let link): link
            }
        }

        /// Something of the answer went to the client.
        var responseStarted: Bool {
            switch self {
            case .connecting, .awaiting: false
            case .streaming, .switching: true
            }
        }

        /// The same phase, its connection's writability as `writable`.
        func writable(_ writable: Bool) -> Phase {
            switch self {
            case .connecting: return self
            case .awaiting(var link, let deadline):
                link.writable = writable
                return .awaiting(link, deadline: deadline)
            case .streaming(var link):
                link.writable = writable
                return .streaming(link)
            case .switching(var link):
                link.writable = writable
                return .switching(link)
            }
        }
    }

    /// The backend connection an exchange holds.
    struct Link {
        let connection: Connection
        /// The connection had served an exchange before this one (a request it loses may then be sent again).
        let reused: Bool
        /// The connection can take more (as its last writability change said).
        var writable: Bool
    }
}
