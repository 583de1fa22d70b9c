import GatehouseCore
import NIOCore
import NIOHTTP1
import Prometheus

/// A front end of the relay's byte lane: ``RelayLane`` for an HTTP/1.1 connection, ``LaneStream`` for an HTTP/2
/// stream (of its connection's ``HTTP2Lane``). Both serve one request at a time, decided by the relay's one decision, over a byte connection of their
/// loop's ``LaneConnectionPool``.
///
/// What they share is the backend's side, in the extensions of this protocol: the request sent (on an idle
/// connection at once), the upstream timeout (504), an unreachable backend (502), one retry of a request a reused
/// connection lost before any answer, the answer's head read from the bytes (``ResponseHeadReader``) and its body
/// followed by its framing, back-pressure from the client to the backend, and the access-log line, metrics and trace
/// of each request. What differs is the client's side, which each front writes in its own form: the answer's head,
/// its body and end, the relay's problem answers, and what a failure after the answer started does (the HTTP/1.1
/// connection ends; the HTTP/2 stream is reset).
protocol LaneFront: LaneReceiver {
    var relay: APIRelay { get }
    var context: ChannelHandlerContext? { get }
    /// `Strict-Transport-Security`'s value on every final answer (`tls.hsts_seconds`), or `nil`.
    var hsts: String? { get }
    /// The request under way, from its decision to its answer's end.
    var exchange: LaneExchange? { get set }
    /// A request's decision is being made off the loop.
    var resolving: Bool { get set }
    /// The front has handed its connection or stream to the handlers behind it, for good.
    var handedOver: Bool { get }
    /// A chunked answer goes on in its chunks as they came (HTTP/1.1), or only their data (HTTP/2).
    static var passesChunks: Bool { get }

    /// Writes the client's head of the backend's answer head `view` (an interim one when its status is `1xx`).
    func writeHead(_ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, _ exchange: LaneExchange, context: ChannelHandlerContext)
    /// Passes the answer's body on: `bytes` as its framing has them (see ``passesChunks``); `last`, the answer ends
    /// with them (they may be none).
    func writeBody(_ bytes: ByteBuffer, last: Bool, _ exchange: LaneExchange, context: ChannelHandlerContext)
    /// Sends what was written (the end of a read from the backend, or of the answer).
    func flushAnswer(context: ChannelHandlerContext)
    /// The answer's last byte was written and the exchange is over (logged, its connection released).
    func answerDone(_ exchange: LaneExchange, context: ChannelHandlerContext)
    /// Answers with the relay's problem document for `error`; the exchange is over.
    func writeProblem(_ error: GatehouseError, _ exchange: LaneExchange, context: ChannelHandlerContext)
    /// The backend failed after part of the answer went out: the client can only learn of it by the end of its
    /// connection or stream.
    func cut(context: ChannelHandlerContext)
    /// Has ``checkDeadline(at:)`` called at `deadline` (or later), the upstream timeout of the request just sent.
    func watchDeadline(_ deadline: NIODeadline, context: ChannelHandlerContext)
    /// No deadline is due any more: the client left.
    func stopWatching()
    /// The client takes what it is sent: the backend is read only while it does. By default, the channel's writability.
    func clientTakes(context: ChannelHandlerContext) -> Bool
}

extension LaneFront {
    func clientTakes(context: ChannelHandlerContext) -> Bool { context.channel.isWritable }

    /// Carries out the part of a decision that leaves the loop, when `plan` has one: the whole decision
    /// (`.resolveAsync`: the store read, a provider token verified, an assertion signed) or a DPoP proof's record
    /// (`.spend`). Back on the loop, while the front still serves its client, `carryOut` gets the decision. `false`
    /// when the plan has no such part.
    func resolveOffLoop(
        _ plan: APIRelay.Plan, for head: HTTPRequestHead, remoteAddress: String?, context: ChannelHandlerContext,
        then carryOut: @escaping (APIRelay.Plan, ChannelHandlerContext) -> Void
    ) -> Bool {
        let relay = relay
        let resolved: EventLoopFuture<APIRelay.Plan>
        switch plan {
        case .resolveAsync:
            resolved = context.eventLoop.makeFutureWithTask {
                await relay.traced(head) { await relay.decideAsync(head, remoteAddress: remoteAddress) }
            }
        case .spend(let proof, let then):
            resolved = relay.spend(proof, then: then, head, remoteAddress: remoteAddress, on: context.eventLoop)
        default:
            return false
        }
        resolving = true
        resolved.assumeIsolated().whenSuccess { plan in
            self.resolving = false
            guard let context = self.context, context.channel.isActive, !self.handedOver else { return }
            carryOut(plan, context)
        }
        return true
    }

    /// Starts the exchange of a request the decision forwards with `upstreamHead`: counted, its upstream head
    /// written as bytes (``UpstreamHeadWriter``), sent on a connection of `pool`.
    func start(
        _ upstreamHead: HTTPRequestHead, _ entry: APIRelay.Entry, clientKeepAlive: Bool, pool: LaneConnectionPool, context: ChannelHandlerContext
    ) {
        relay.metrics.proxiedRequests.increment()
        relay.metrics.relayedRequests.increment()
        relay.metrics.laneRequests.increment()
        var bytes = context.channel.allocator.buffer(capacity: 512)
        UpstreamHeadWriter.write(upstreamHead, into: &bytes)
        let exchange = LaneExchange(head: bytes, entry: entry, clientKeepAlive: clientKeepAlive, pool: pool)
        self.exchange = exchange
        acquire(for: exchange, fresh: false)
    }

    /// Sends the exchange's request on a connection of its pool: an idle one at once, without a future (the
    /// common case on a busy relay), else a new one (always a new one for a retry, `fresh`).
    func acquire(for exchange: LaneExchange, fresh: Bool) {
        if !fresh, let idle = exchange.pool.takeIdle() {
            send(exchange, on: idle)
            return
        }
        exchange.pool.connect().whenComplete { result in
            switch result {
            case .success(let connection):
                guard self.exchange === exchange, self.context != nil else {
                    connection.close()
                    return
                }
                self.send(exchange, on: connection)
            case .failure(let error):
                guard self.exchange === exchange else { return }
                self.unreachable(exchange, error)
            }
        }
    }

    private func send(_ exchange: LaneExchange, on connection: LaneConnection) {
        guard let context else { return }
        exchange.attempts += 1
        exchange.connection = connection
        exchange.reused = connection.reused
        connection.handler.receiver = self
        connection.setReading(clientTakes(context: context))
        connection.send(exchange.head)
        let timeout = exchange.entry.upstream?.timeout ?? relay.settings.upstreamTimeout
        exchange.deadline = context.eventLoop.now + .milliseconds(Int64(timeout * 1000))
        watchDeadline(exchange.deadline, context: context)
    }

    /// The upstream timeout, checked when the request's deadline may have passed: a request out with no answer
    /// yet is answered 504 once its deadline has passed. The deadline still to come, or `nil` when there is none
    /// (no request out, or its answer started).
    func checkDeadline(at now: NIODeadline) -> NIODeadline? {
        guard let exchange, exchange.connection != nil, !exchange.answerStarted else { return nil }
        guard now >= exchange.deadline else { return exchange.deadline }
        timedOut(exchange)
        return nil
    }

    /// The client can take more (or cannot): the backend is read accordingly once the answer has started.
    func clientWritabilityChanged(context: ChannelHandlerContext) {
        if let exchange, exchange.answerStarted { exchange.connection?.setReading(clientTakes(context: context)) }
    }

    /// The client's connection or stream ended: the request under way is abandoned and logged.
    func clientLeft() {
        stopWatching()
        guard let exchange else { return }
        self.exchange = nil
        exchange.connection?.close()
        // nginx's 499, "client closed request", when the answer had not started.
        record(exchange, status: exchange.status == 0 ? 499 : exchange.status)
    }
}
