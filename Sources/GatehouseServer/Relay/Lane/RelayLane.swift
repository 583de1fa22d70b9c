import GatehouseCore
import NIOCore
import NIOHTTP1

/// The relay's fast lane: the first handler of an HTTP/1.1 connection (behind TLS), it serves the connection's
/// requests as bytes for as long as they are simple, and hands the connection to the NIOHTTP1 pipeline behind it,
/// for good, at the first that is not. That pipeline is made then (``InstallBehind``): until the hand-over only
/// ``HTTP1ConnectionGuard`` (the connection's idle and send timeouts) and ``RouterHandoff`` are behind the lane.
///
/// A simple request is a `GET` to `/v1/api/…` whose whole head came in one read with nothing after it, that
/// ``RequestHeadReader`` reads (a strict subset of RFC 9112 that NIOHTTP1 reads alike), with no body, `Upgrade` or
/// `Expect`. The lane decides it as the relay does (``APIRelay/decide(_:remoteAddress:memo:)``, with the connection's
/// memo). When the one decision forwards it, the lane writes the upstream head as bytes (``UpstreamHeadWriter``) on a
/// connection of its loop's ``LaneConnectionPool``, reads the answer's head from the bytes (``ResponseHeadReader``),
/// writes the client's (``AnswerHeadWriter``) and passes the body on by its framing. No NIOHTTP1 part is made for the
/// answer: that is what the lane saves (`bench/run.sh`, the `nio-head-relay` floor).
///
/// A decision that leaves the loop (the store read, an assertion signed, a DPoP proof's record) is awaited, and
/// bytes that come meanwhile are held (``LaneFront/resolveOffLoop(_:for:remoteAddress:context:then:)``).
///
/// Everything else goes, with the connection, to the pipeline behind: a declined or partial head, a body, a request
/// the relay does not forward (its decision goes along, ``APIRelayHandler/decidedByLane``, so nothing is
/// decided twice), bytes pipelined behind a request, the client's half-close. What the lane does carries the relay's
/// rules over: the upstream timeout (504), an unreachable backend (502), one retry of a request a reused connection
/// lost before any answer, back-pressure from the client to the backend, the access-log line, metrics and trace,
/// HSTS, and the server's quiescing. The connection's own timeouts stay ``HTTP1ConnectionGuard``'s, which the lane
/// tells when a request begins and ends.
final class RelayLane: ChannelDuplexHandler, RemovableChannelHandler, LaneFront {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Adds the HTTP/1.1 handlers behind the lane at the hand-over, and returns the relay's, which takes a
    /// handed-over request's decision: a connection the lane serves alone never makes them.
    typealias InstallBehind = (ChannelPipeline.SynchronousOperations) throws -> APIRelayHandler?

    let relay: APIRelay
    /// `nil` once the handlers behind are made.
    private var installBehind: InstallBehind?
    let connectionGuard: HTTP1ConnectionGuard
    private let remoteAddress: String?
    /// `Strict-Transport-Security`'s value on every final answer, or `nil`.
    let hsts: String?
    var context: ChannelHandlerContext?
    /// The session the connection's last relayed request presented (``CredentialMemo``).
    private var memo: CredentialMemo?
    var exchange: LaneExchange?
    /// A request's decision is being made off the loop.
    var resolving = false
    /// The pool of the upstream the last request went to.
    private var pools = LanePoolMemo()
    /// Client bytes that came while a request was under way (pipelined): they go to the pipeline with the
    /// connection once its answer is out.
    private var held: ByteBuffer?
    /// The client's input ended while a request was under way: it goes to the pipeline with the connection.
    private var heldInputClosed = false
    /// Bytes or the client's half-close came while a request was under way.
    var hasHeldInput: Bool { held != nil || heldInputClosed }
    /// The channel asked for a read while bytes were held.
    private var readPending = false
    /// The server is shutting down: the connection ends after the answer under way.
    var quiescing = false
    /// The lane wrote an answer that ends the connection.
    var closingClient = false
    var handedOver = false
    /// One timer per connection (the upstream's deadline), armed until it fires.
    private var timer: Scheduled<Void>?

    init(
        relay: APIRelay, connectionGuard: HTTP1ConnectionGuard, remoteAddress: String?, hstsSeconds: Int,
        installBehind: @escaping InstallBehind
    ) {
        self.relay = relay
        self.installBehind = installBehind
        self.connectionGuard = connectionGuard
        self.remoteAddress = remoteAddress
        hsts = hstsSeconds > 0 ? "max-age=\(hstsSeconds)" : nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopWatching()
        self.context = nil
    }

    // MARK: From the client

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !handedOver else {
            context.fireChannelRead(data)
            return
        }
        var buffer = unwrapInboundIn(data)
        guard exchange == nil, !resolving, held == nil else {
            // Pipelined behind the request under way: the pipeline serves it, after this answer.
            if var kept = held {
                held = nil
                kept.writeBuffer(&buffer)
                held = kept
            } else {
                held = buffer
            }
            return
        }
        guard !closingClient else { return }
        serve(buffer, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Nothing behind has read anything while the lane has the connection: their read-cycle work (the read
        // ahead, the body clock) is not done for nothing. A hand-over in this cycle passes it on.
        if handedOver { context.fireChannelReadComplete() }
    }

    func read(context: ChannelHandlerContext) {
        guard handedOver || held == nil else {
            readPending = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        clientWritabilityChanged(context: context)
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !handedOver else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        switch event {
        case is ChannelShouldQuiesceEvent:
            // As NIO's pipeline handler: an idle connection closes now, a busy one after its answer.
            if exchange == nil, !resolving { closeClient(context: context) } else { quiescing = true }
        case ChannelEvent.inputClosed:
            if closingClient { return }
            // The pipeline behind answers a half-closed connection as it always has: now, or after the answer.
            heldInputClosed = true
            if exchange == nil, !resolving { handOver(nil, plan: nil, context: context) }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientLeft()
        context.fireChannelInactive()
    }

    // MARK: The decision

    /// Serves the request in `buffer` if it is simple and the relay forwards it from memory; else hands the
    /// connection over.
    private func serve(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard let head = Self.simpleHead(buffer) else {
            handOver(buffer, plan: nil, context: context)
            return
        }
        var memo = self.memo
        let plan = relay.decide(head, remoteAddress: remoteAddress, memo: &memo)
        // Bytes that come while the decision is off the loop are held.
        let offLoop = resolveOffLoop(plan, for: head, remoteAddress: remoteAddress, context: context) { plan, context in
            self.carryOut(plan, for: head, buffer, memo: memo, context: context, inReadCycle: false)
        }
        if offLoop { return }
        carryOut(plan, for: head, buffer, memo: memo, context: context, inReadCycle: true)
    }

    /// Starts the exchange the decision forwards; any other decision goes with the connection to the pipeline.
    private func carryOut(
        _ plan: APIRelay.Plan, for head: HTTPRequestHead, _ buffer: ByteBuffer, memo: CredentialMemo?, context: ChannelHandlerContext,
        inReadCycle: Bool
    ) {
        guard case .forward(let upstreamHead, let entry) = plan, let pool = pools.pool(for: entry.upstream, relay: relay, on: context.eventLoop)
        else {
            handOver(buffer, plan: (plan, memo), context: context, inReadCycle: inReadCycle)
            return
        }
        self.memo = memo
        connectionGuard.laneRequestBegan()
        start(upstreamHead, entry, clientKeepAlive: head.isKeepAlive, pool: pool, context: context)
    }

    /// The NIOHTTP1 head of the request that is all of `buffer`, when the lane serves it.
    static func simpleHead(_ buffer: ByteBuffer) -> HTTPRequestHead? {
        buffer.readableBytesView.withUnsafeBytes { bytes -> HTTPRequestHead? in
            guard case .read(let view) = RequestHeadReader.read(bytes), view.length == bytes.count,
                HeadBytes.equal(bytes, view.method, getMethod), HeadBytes.prefixMatches(bytes, from: view.target.lowerBound, apiPrefix)
            else { return nil }
            for field in view.fields {
                // (`Transfer-Encoding` is declined by the reader.)
                if HeadBytes.equalIgnoringCase(bytes, field.name, "content-length") || HeadBytes.equalIgnoringCase(bytes, field.name, "upgrade")
                    || HeadBytes.equalIgnoringCase(bytes, field.name, "expect")
                {
                    return nil
                }
            }
            return view.requestHead(in: bytes)
        }
    }

    private static let getMethod = Array("GET".utf8)
    private static let apiPrefix = Array(APIRelay.prefix.utf8)

    /// Hands the connection to the NIOHTTP1 pipeline behind, for good: `bytes` (and whatever was held) are read
    /// there as they came, the first request with `plan`, the lane's decision of it, when there is one.
    func handOver(_ bytes: ByteBuffer?, plan: (APIRelay.Plan, CredentialMemo?)?, context: ChannelHandlerContext, inReadCycle: Bool = true) {
        handedOver = true
        stopWatching()
        do {
            let relayHandler = try installBehind?(context.pipeline.syncOperations)
            installBehind = nil
            if let plan { relayHandler?.decidedByLane = plan }
        } catch {
            context.fireErrorCaught(error)
            closeClient(context: context)
            return
        }
        var bytes = bytes
        if var held {
            if bytes == nil { bytes = held } else { bytes!.writeBuffer(&held) }
            self.held = nil
        }
        if let bytes {
            context.fireChannelRead(wrapInboundOut(bytes))
            // Outside the client's read cycle (after an answer), the pipeline gets the end of this read too.
            if !inReadCycle { context.fireChannelReadComplete() }
        }
        // (Fired before the lane leaves the pipeline: a context that left passes nothing on.)
        if heldInputClosed {
            heldInputClosed = false
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        // The server's shutdown began while the lane had the connection: the pipeline ends it after its answer.
        if quiescing { context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        let channel = context.channel
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        if readPending {
            readPending = false
            channel.read()
        }
    }

    // MARK: The upstream timeout

    func watchDeadline(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        // Armed once, and again when it fires before a later request's deadline.
        if timer == nil { armTimer(at: deadline, context: context) }
    }

    func stopWatching() {
        timer?.cancel()
        timer = nil
    }

    private func armTimer(at deadline: NIODeadline, context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            self.timer = nil
            guard let context = self.context, let next = self.checkDeadline(at: context.eventLoop.now) else { return }
            self.armTimer(at: next, context: context)
        }
    }
}
