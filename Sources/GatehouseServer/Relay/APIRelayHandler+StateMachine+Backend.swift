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
        guard case .relaying(var exchange) = state, exchange.id == id else {
            // The exchange ended (the client left) while connecting.
            return .close(connection)
        }
        state = .modifying
        exchange.connection = connection
        exchange.reused = reused
        exchange.upstreamWritable = upstreamWritable
        exchange.attempts += 1
        // A second attempt sends everything kept; the first, what arrived while connecting.
        let body = exchange.attempts > 1 ? (exchange.kept ?? []) : exchange.unsent
        exchange.unsent = []
        exchange.deadline = now + timeout
        let deadline = exchange.deadline
        let end = exchange.requestComplete
        let head = exchange.head
        state = .relaying(exchange)
        return .send(Send(connection: connection, head: head, body: body, end: end, clientWritable: clientWritable, armTimer: arm(deadline)))
    }

    /// No connection could be made for exchange `id`.
    mutating func connectionFailed(for id: Int, _ error: any Error) -> Failure? {
        guard case .relaying(let exchange) = state, exchange.id == id else { return nil }
        return unreachable(exchange, error)
    }

    /// The backend's answer head.
    mutating func upstreamHead(_ head: HTTPResponseHead) -> UpstreamHeadAction {
        guard case .relaying(var exchange) = state else { return .nothing }
        state = .modifying
        if head.status == .switchingProtocols {
            // A switch nobody asked for, or one that is not this WebSocket handshake's, would leave the
            // client a raw connection to the backend: 502, and the backend's connection is closed.
            guard exchange.upgrade, WebSocketHandshake.completes(head, expectedAccept: exchange.expectedAccept) else {
                let error = UpstreamProtocol.Failure.invalidSwitch.error
                return .fail(fail(exchange, .invalidSwitch, error, closing: true))
            }
            exchange.responseStarted = true
            exchange.switching = true
            exchange.status = 101
            state = .relaying(exchange)
            return .switching(head, requestID: exchange.entry.requestID)
        }
        exchange.responseStarted = true
        guard head.status.code >= 200 else {
            // Other 1xx are passed on; the final answer follows.
            state = .relaying(exchange)
            return .informational(head)
        }
        exchange.upstreamKeepAlive = head.isKeepAlive
        exchange.status = Int(head.status.code)
        state = .relaying(exchange)
        return .final(
            head, requestID: exchange.entry.requestID, close: !exchange.clientKeepAlive, upstream: exchange.entry.upstream, started: exchange.started)
    }

    /// A part of the backend's answer body: whether it goes to the client.
    func upstreamBody() -> Bool {
        if case .relaying = state { true } else { false }
    }

    /// The backend's answer ended.
    mutating func upstreamEnd() -> UpstreamEndAction {
        guard case .relaying(let exchange) = state else { return .nothing }
        if exchange.switching {
            state = .tunnelled
            return .tunnel(exchange.connection, record: exchange.record)
        }
        state = exchange.requestComplete ? .idle : .discarding
        return .finish(
            connection: exchange.connection, reuse: exchange.requestComplete && exchange.upstreamKeepAlive, record: exchange.record,
            closeClient: !exchange.clientKeepAlive)
    }

    /// A read of the backend completed: whether to flush the client.
    func upstreamReadComplete() -> Bool {
        if case .relaying = state { true } else { false }
    }

    /// The client was flushed after a read of the backend: the connection to stop reading when the client
    /// still cannot take more (asked after the flush, which may have made room and resumed the reading).
    func clientFlushed(clientWritable: Bool) -> Connection? {
        guard !clientWritable, case .relaying(let exchange) = state else { return nil }
        return exchange.connection
    }

    /// The backend connection became writable or not: whether to resume reading the client.
    mutating func upstreamWritabilityChanged(_ isWritable: Bool) -> Bool {
        if case .relaying(var exchange) = state {
            state = .modifying
            exchange.upstreamWritable = isWritable
            state = .relaying(exchange)
        }
        return isWritable && resumeReading()
    }

    /// The backend connection failed or closed before the exchange ended.
    mutating func upstreamFailed(_ error: any Error) -> UpstreamFailedAction {
        guard case .relaying(var exchange) = state, let connection = exchange.connection else { return .nothing }
        if exchange.responseStarted {
            // Part of the answer is out: the client can only learn of the failure by the connection's end.
            state = .discarding
            return .abandon(connection)
        }
        if exchange.reused, exchange.attempts == 1, exchange.idempotent, exchange.kept != nil {
            // The backend closed a kept-alive connection as the request went out: nothing was processed.
            state = .modifying
            exchange.connection = nil
            state = .relaying(exchange)
            return .retry(connection, Acquire(id: exchange.id, upstream: exchange.entry.upstream, fresh: true))
        }
        // The failure closes the connection the exchange still holds.
        return .fail(unreachable(exchange, error))
    }

    /// The connection's timer fired at `now`.
    mutating func timerFired(now: NIODeadline) -> TimerAction {
        timerArmed = false
        // No request out (between requests, or connecting again): a request going out arms the timer.
        guard case .relaying(let exchange) = state, exchange.connection != nil, !exchange.responseStarted else { return .nothing }
        guard now >= exchange.deadline else {
            guard let deadline = arm(exchange.deadline) else { return .nothing }
            return .arm(deadline)
        }
        let error = UpstreamProtocol.Failure.timeout.error
        return .fail(fail(exchange, .upstreamTimeout, error, closing: !exchange.requestComplete))
    }
}
