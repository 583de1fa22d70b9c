import GatehouseCore
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// The relay's lane on an HTTP/2 stream: the first (and, while it serves, only) handler of a stream channel. A
/// stream whose request is simple is served by the lane alone; any other gets the stream's usual handlers
/// (``HTTP2StreamCodec``, the relay's, the router's hand-off) behind the lane, which then leaves.
///
/// A simple request is a `GET` to `/v1/api/…` whose HEADERS end the stream (no body), without `content-length` or
/// `expect`, that the codec would pass on (``HTTP2StreamCodec/problem(with:)``). The lane decides it as the relay
/// does (``APIRelay/decide(_:remoteAddress:memo:)``, with the connection's memo, ``StreamsCredentialMemo``; a part
/// that leaves the loop awaited, ``LaneFront/resolveOffLoop(_:for:remoteAddress:context:then:)``). When
/// the one decision forwards it, the upstream head is written as bytes (``UpstreamHeadWriter``) on a connection of
/// its loop's ``LaneConnectionPool``, and the answer is read from the bytes (``LaneFront``) and written as frames:
/// HEADERS from the answer head (``AnswerFieldsWriter``), the body as DATA (a chunked one as its chunks' data), the
/// end as END_STREAM on the last frame. No HTTP/1 part is made on either side: that is what the lane saves over the
/// codec and the NIOHTTP1 relay (`bench/tls.sh`, the HTTP/2 row).
///
/// Any other decision goes with the stream to the handlers behind (``APIRelayHandler/decidedByLane``: nothing is
/// decided twice). The stream's flow control is the stream channel's: the backend is read only while the stream is
/// writable, and a stream whose client takes nothing of its answer for `limits.client_send_timeout_seconds` is
/// reset (``ClientSendClock``), as the codec does. A client's `RST_STREAM` closes the stream channel, and with it
/// the request's backend connection.
final class StreamLane: ChannelDuplexHandler, RemovableChannelHandler, LaneFront {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    let relay: APIRelay
    private let remoteAddress: String?
    /// `Strict-Transport-Security`'s value on every final answer, or `nil`.
    let hsts: String?
    /// The connection's credential memo, shared by its streams.
    private let memo: StreamsCredentialMemo
    /// The connection's stream set-up, which adds the stream's usual handlers behind the lane.
    private let handlers: HTTP2StreamHandlers
    var context: ChannelHandlerContext?
    var exchange: LaneExchange?
    private var send: ClientSendClock
    var resolving = false
    var handedOver = false
    /// The final answer's HEADERS, held until its first DATA or a flush: an answer without a body ends on them.
    var heldHead: HPACKHeaders?

    init(
        relay: APIRelay, remoteAddress: String?, hsts: String?, memo: StreamsCredentialMemo, sendTimeout: TimeAmount,
        handlers: HTTP2StreamHandlers
    ) {
        self.relay = relay
        self.remoteAddress = remoteAddress
        self.hsts = hsts
        self.memo = memo
        send = ClientSendClock(timeout: sendTimeout)
        self.handlers = handlers
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopWatching()
        send.stop()
        self.context = nil
    }

    // MARK: From the client

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !handedOver else {
            context.fireChannelRead(data)
            return
        }
        // Once the request is taken its stream has ended: nothing more of it comes here (flow control and resets
        // are the stream channel's).
        guard exchange == nil, !resolving else { return }
        let payload = unwrapInboundIn(data)
        guard case .headers(let frame) = payload, frame.endStream, let head = Self.simpleHead(frame.headers) else {
            handOver(payload, plan: nil, context: context)
            return
        }
        var memo = self.memo.memo
        let plan = relay.decide(head, remoteAddress: remoteAddress, memo: &memo)
        let offLoop = resolveOffLoop(plan, for: head, remoteAddress: remoteAddress, context: context) { plan, context in
            self.carryOut(plan, for: payload, memo: memo, context: context, inReadCycle: false)
        }
        if offLoop { return }
        carryOut(plan, for: payload, memo: memo, context: context, inReadCycle: true)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !handedOver {
            send.writabilityChanged(context)
            clientWritabilityChanged(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        send.stop()
        clientLeft()
        context.fireChannelInactive()
    }

    // MARK: The decision

    /// Starts the exchange the decision forwards; any other decision goes with the stream to the handlers behind.
    private func carryOut(
        _ plan: APIRelay.Plan, for payload: HTTP2Frame.FramePayload, memo: CredentialMemo?, context: ChannelHandlerContext, inReadCycle: Bool
    ) {
        guard case .forward(let upstreamHead, let entry) = plan,
            let pool = handlers.lanePools.pool(for: entry.upstream, relay: relay, on: context.eventLoop)
        else {
            handOver(payload, plan: (plan, memo), context: context, inReadCycle: inReadCycle)
            return
        }
        self.memo.memo = memo
        // (Keep-alive is the connection's business on HTTP/2, not a stream's.)
        start(upstreamHead, entry, clientKeepAlive: true, pool: pool, context: context)
    }

    /// The request head of a stream's header block, when the lane serves it.
    static func simpleHead(_ block: HPACKHeaders) -> HTTPRequestHead? {
        // The cheap checks first: a stream the lane does not take has its head built once, by the codec.
        guard block.first(name: ":method") == "GET", block.first(name: ":path")?.hasPrefix(APIRelay.prefix) == true,
            !block.contains(name: "content-length"), !block.contains(name: "expect"), HTTP2StreamCodec.problem(with: block) == nil
        else { return nil }
        return try? HTTP2StreamCodec.requestHead(block, endStream: true).head
    }

    /// Puts the stream's usual handlers behind the lane and leaves: `payload` is read there as it came, with `plan`,
    /// the lane's decision of it, when there is one.
    private func handOver(
        _ payload: HTTP2Frame.FramePayload, plan: (APIRelay.Plan, CredentialMemo?)?, context: ChannelHandlerContext, inReadCycle: Bool = true
    ) {
        handedOver = true
        stopWatching()
        send.stop()
        do {
            let relayHandler = try handlers.install(on: context.channel)
            if let plan { relayHandler?.decidedByLane = plan }
        } catch {
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(wrapInboundOut(payload))
        // Outside the stream's read cycle (after a decision off the loop), the handlers get the end of this read too.
        if !inReadCycle { context.fireChannelReadComplete() }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    // MARK: The upstream timeout

    func watchDeadline(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        handlers.deadlines.watch(self, until: deadline, on: context.eventLoop)
    }

    func stopWatching() {
        // Called as the stream ends and again as its handlers go: forgetting a lane not watched does nothing.
        handlers.deadlines.forget(self)
    }
}
