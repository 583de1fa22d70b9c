import GatehouseCore
import NIOCore
import NIOHTTP1

/// The machine's events from the backend connection: ready or failed, the answer's head and end, its
/// writability, its failure, the timer.
extension APIRelayHandler.StateMachine {
    /// A connection for exchange `id` is ready; the request goes out on it, due to be answered within `timeout`.
    mutating func connectionReady(
        _ connection: Connection, for id: Int, reused: Bool, upstreamWritable: Bool, clientWritable: Bool, timeout: TimeAmount, now: NIODeadline
    ) -> ConnectedAction {
        guard case .relaying(let exchange, .connecting(let unsent)) = state, exchange.id == id else {
            // The exchange ended (the client left) while connecting.
            return .close(connection)
        }
        state = .modifying
        exchange.attempts += 1
        // A second attempt sends everything kept; the first, what arrived while connecting.
        let body = exchange.attempts > 1 ? (exchange.kept ?? []) : unsent
        let deadline = now + timeout
        let (head, end) = (exchange.head, exchange.requestComplete)
        state = .relaying(exchange, .awaiting(Link(connection: connection, reused: reused, writable: upstreamWritable), deadline: deadline))
        return .send(Send(connection: connection, head: head, body: body, end: end, clientWritable: clientWritable, armTimer: arm(deadline)))
    }

    /// No connection could be made for exchange `id`.
    mutating func connectionFailed(for id: Int, _ error: any Error) -> Failure? {
        guard case .relaying(let exchange, let phase) = state, exchange.id == id, case .connecting = phase else { return nil }
        return unreachable(exchange, phase, error)
    }

    /// The backend's answer head.
    mutating func upstreamHead(_ head: HTTPResponseHead) -> UpstreamHeadAction {
        guard case .relaying(let exchange, let phase) = state, let link = phase.link else { return .nothing }
        state = .modifying
        if head.status == .switchingProtocols {
            // A switch nobody asked for, or one that is not this WebSocket handshake's, would leave the
            // client a raw connection to the backend: 502, and the backend's connection is closed.
            guard exchange.upgrade, WebSocketHandshake.completes(head, expectedAccept: exchange.expectedAccept) else {
                let error = UpstreamProtocol.Failure.invalidSwitch.error
                return .fail(fail(exchange, phase, .invalidSwitch, error, closing: true))
            }
            exchange.status = 101
            state = .relaying(exchange, .switching(link))
            return .switching(head, requestID: exchange.entry.requestID)
        }
        guard head.status.code >= 200 else {
            // Other 1xx are passed on; the final answer follows.
            state = .relaying(exchange, .streaming(link))
            return .informational(head)
        }
        exchange.upstreamKeepAlive = head.isKeepAlive
        exchange.status = Int(head.status.code)
        state = .relaying(exchange, .streaming(link))
        return .final(
            head, requestID: exchange.entry.requestID, close: !exchange.clientKeepAlive, upstream: exchange.entry.upstream, started: exchange.started)
    }

    /// A part of the backend's answer body: whether it goes to the client.
    func upstreamBody() -> Bool {
        if case .relaying = state { true } else { false }
    }

    /// The backend's answer ended.
    mutating func upstreamEnd() -> UpstreamEndAction {
        guard case .relaying(let exchange, let phase) = state, let link = phase.link else { return .nothing }
        if case .switching = phase {
            state = .tunnelled
            return .tunnel(link.connection, record: exchange.record)
        }
        state = exchange.requestComplete ? .idle : .discarding
        return .finish(
            connection: link.connection, reuse: exchange.requestComplete && exchange.upstreamKeepAlive, record: exchange.record,
            closeClient: !exchange.clientKeepAlive)
    }

    /// A read of the backend completed: whether to flush the client.
    func upstreamReadComplete() -> Bool {
        if case .relaying = state { true } else { false }
    }

    /// The client was flushed after a read of the backend: the connection to stop reading when the client
    /// still cannot take more (asked after the flush, which may have made room and resumed the reading).
    func clientFlushed(clientWritable: Bool) -> Connection? {
        guard !clientWritable, case .relaying(_, let phase) = state else { return nil }
        return phase.link?.connection
    }

    /// The backend connection became writable or not: whether to resume reading the client.
    mutating func upstreamWritabilityChanged(_ isWritable: Bool) -> Bool {
        if case .relaying(let exchange, let phase) = state, phase.link != nil {
            state = .relaying(exchange, phase.writable(isWritable))
        }
        return isWritable && resumeReading()
    }

    /// The backend connection failed or closed before the exchange ended.
    mutating func upstreamFailed(_ error: any Error) -> UpstreamFailedAction {
        guard case .relaying(let exchange, let phase) = state, let link = phase.link else { return .nothing }
        if phase.responseStarted {
            // Part of the answer is out: the client can only learn of the failure by the connection's end.
            state = .discarding
            return .abandon(link.connection)
        }
        if link.reused, exchange.attempts == 1, exchange.idempotent, exchange.kept != nil {
            // The backend closed a kept-alive connection as the request went out: nothing was processed.
            state = .relaying(exchange, .connecting(unsent: []))
            return .retry(link.connection, Acquire(id: exchange.id, upstream: exchange.entry.upstream, fresh: true))
        }
        // The failure closes the connection the exchange still holds.
        return .fail(unreachable(exchange, phase, error))
    }

    /// The connection's timer fired at `now`.
    mutating func timerFired(now: NIODeadline) -> TimerAction {
        timerArmed = false
        // Only a request out with no answer yet has a deadline; a request going out arms the timer.
        guard case .relaying(let exchange, let phase) = state, case .awaiting(_, let deadline) = phase else { return .nothing }
        guard now >= deadline else {
            guard let deadline = arm(deadline) else { return .nothing }
            return .arm(deadline)
        }
        let error = UpstreamProtocol.Failure.timeout.error
        return .fail(fail(exchange, phase, .upstreamTimeout, error, closing: !exchange.requestComplete))
    }
}
