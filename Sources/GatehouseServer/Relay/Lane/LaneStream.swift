import GatehouseCore
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 stream its connection's lane (``HTTP2Lane``) serves: a simple relayed request, served on the connection's
/// own pipeline without a stream channel.
///
/// A simple request is a `GET` to `/v1/api/…` whose HEADERS end the stream (no body), without `content-length` or
/// `expect`, that the codec would pass on (``HTTP2StreamCodec/problem(with:)``). The stream decides it as the relay
/// does (``APIRelay/decide(_:remoteAddress:memo:)``, with the connection's memo, ``StreamsCredentialMemo``; a part
/// that leaves the loop awaited, ``LaneFront/resolveOffLoop(_:for:remoteAddress:context:then:)``). When
/// the one decision forwards it, the upstream head is written as bytes (``UpstreamHeadWriter``) on a connection of
/// its loop's ``LaneConnectionPool``, and the answer is read from the bytes (``LaneFront``) and written as frames of
/// this stream: HEADERS from the answer head (``AnswerFieldsWriter``), the body as DATA (a chunked one as its chunks'
/// data), the end as END_STREAM on the last frame. No HTTP/1 part and no stream channel is made: that is what the lane
/// saves over the codec and the NIOHTTP1 relay (`bench/tls.sh`, the HTTP/2 row).
///
/// Any other decision goes with the HEADERS to the connection's multiplexer, whose stream channel gets the usual
/// handlers (``HTTP2StreamHandlers/setUp(_:)``, ``APIRelayHandler/decidedByLane``: nothing is decided twice).
///
/// Flow control: NIOHTTP2 holds a DATA frame until the stream's and the connection's windows let it go, and completes
/// its write then. The bytes written and not yet gone are counted, as a stream channel counts them: above 8 KiB the
/// stream no longer takes what comes and the backend is no longer read, below 4 KiB it is read again. A stream whose
/// client takes none of its answer for `limits.client_send_timeout_seconds` is reset, as the codec's stream is. A
/// client's `RST_STREAM` ends the stream, and with it the request's backend connection.
final class LaneStream: LaneFront {
    /// A stream channel's bounds (NIOHTTP2's `StreamConfiguration`, which the connection's multiplexer is given too).
    static let highWatermark = NIOHTTP2Handler.StreamConfiguration().outboundBufferSizeHighWatermark
    static let lowWatermark = NIOHTTP2Handler.StreamConfiguration().outboundBufferSizeLowWatermark

    let id: HTTP2StreamID
    /// The connection's lane; it holds the stream until the stream closes.
    private let lane: HTTP2Lane
    var exchange: LaneExchange?
    var resolving = false
    var handedOver = false
    /// The final answer's HEADERS, held until its first DATA or a flush: an answer without a body ends on them.
    var heldHead: HPACKHeaders?
    /// The stream has closed (both ends, or reset): nothing more is written on it.
    private(set) var closed = false
    /// This side's END_STREAM was written: the stream's close that follows is the answer's end.
    private var endWritten = false
    /// Bytes of DATA written and not yet gone; `blocked` from above the high watermark until below the low one.
    private var pending = 0
    private var blocked = false
    private var send: ClientSendClock

    init(id: HTTP2StreamID, lane: HTTP2Lane) {
        self.id = id
        self.lane = lane
        send = ClientSendClock(timeout: lane.handlers.sendTimeout)
    }

    var relay: APIRelay { lane.relay }
    var hsts: String? { lane.handlers.hsts }
    /// The connection's context while the stream is open.
    var context: ChannelHandlerContext? { closed ? nil : lane.context }

    // MARK: The decision

    /// Decides the stream's request `head` (its HEADERS `frame`), and carries the decision out.
    func begin(_ head: HTTPRequestHead, frame: HTTP2Frame, context: ChannelHandlerContext) {
        var memo = lane.handlers.memo.memo
        let plan = relay.decide(head, remoteAddress: lane.remoteAddress, memo: &memo)
        let offLoop = resolveOffLoop(plan, for: head, remoteAddress: lane.remoteAddress, context: context) { plan, context in
            self.carryOut(plan, frame: frame, memo: memo, context: context, inReadCycle: false)
        }
        if offLoop { return }
        carryOut(plan, frame: frame, memo: memo, context: context, inReadCycle: true)
    }

    /// Starts the exchange the decision forwards; any other decision goes with the stream to the multiplexer.
    private func carryOut(
        _ plan: APIRelay.Plan, frame: HTTP2Frame, memo: CredentialMemo?, context: ChannelHandlerContext, inReadCycle: Bool
    ) {
        guard case .forward(let upstreamHead, let entry) = plan,
            let pool = lane.handlers.lanePools.pool(for: entry.upstream, relay: relay, on: context.eventLoop)
        else {
            handedOver = true
            lane.handOver(self, frame: frame, plan: (plan, memo), inReadCycle: inReadCycle)
            return
        }
        lane.handlers.memo.memo = memo
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

    // MARK: The stream's end

    /// The stream closed (its END_STREAM both ways, a reset, or the connection's end). Before this side's END_STREAM,
    /// the client left: the request under way is abandoned.
    func streamClosed() {
        guard !closed else { return }
        closed = true
        send.stop()
        if endWritten {
            // The answer's last frame is being written: the exchange ends as that write returns.
            stopWatching()
        } else {
            clientLeft()
        }
    }

    // MARK: Flow control

    func clientTakes(context: ChannelHandlerContext) -> Bool { !blocked && context.channel.isWritable }

    /// Writes a DATA frame, counting its bytes until NIOHTTP2 has sent them. The last one is counted only when it
    /// takes the stream past the high watermark: below it, nothing would ever wait on its count.
    func writeData(_ data: ByteBuffer, endStream: Bool, context: ChannelHandlerContext) {
        let count = data.readableBytes
        let frame = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(data), endStream: endStream))
        guard !endStream || pending + count > Self.highWatermark else {
            write(frame, context: context)
            return
        }
        pending += count
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { _ in self.sent(count) }
        write(frame, promise: promise, context: context)
        if !blocked, pending > Self.highWatermark {
            blocked = true
            followSendClock(on: context.eventLoop)
        }
    }

    private func sent(_ count: Int) {
        pending -= count
        guard blocked, pending <= Self.lowWatermark else { return }
        blocked = false
        guard let context else { return }
        followSendClock(on: context.eventLoop)
        clientWritabilityChanged(context: context)
    }

    /// The stream's send timeout (``ClientSendClock``) follows `blocked`: a client that takes nothing of the answer
    /// for its length has the stream reset.
    private func followSendClock(on eventLoop: any EventLoop) {
        send.follow(writable: !blocked, on: eventLoop) {
            guard self.blocked, let context = self.context else { return }
            self.cut(context: context)
        }
    }

    /// Writes a frame of this stream, noting a frame that ends this side of it.
    func write(_ payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>? = nil, context: ChannelHandlerContext) {
        switch payload {
        case .headers(let headers) where headers.endStream: endWritten = true
        case .data(let data) where data.endStream: endWritten = true
        default: break
        }
        context.write(NIOAny(HTTP2Frame(streamID: id, payload: payload)), promise: promise)
    }

    // MARK: The upstream timeout

    func watchDeadline(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        lane.handlers.deadlines.watch(self, until: deadline, on: context.eventLoop)
    }

    func stopWatching() {
        // Called as the stream ends and again as its exchange does: forgetting a stream not watched does nothing.
        lane.handlers.deadlines.forget(self)
    }
}
