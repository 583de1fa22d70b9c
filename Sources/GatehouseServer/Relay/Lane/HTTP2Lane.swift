import NIOCore
import NIOHTTP2

/// The relay's lane on an HTTP/2 connection: between `NIOHTTP2Handler` and the stream multiplexer, it serves the
/// streams whose request is simple itself (``LaneStream``), as frames on the connection's pipeline, and passes every
/// other stream to the multiplexer, whose stream channels get the usual handlers.
///
/// A stream channel costs its pipeline, its activation and its close, and a write path of its own for every frame:
/// the lane's streams have none. What the multiplexer does for a stream the lane does for its own: their frames are
/// kept from the multiplexer (which knows nothing of them), their close ends their exchange, and the connection's
/// writability reaches them. Reached on the connection's loop only.
final class HTTP2Lane: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let relay: APIRelay
    /// The connection's stream set-up: the memo, the deadlines, the pools and the usual handlers it shares.
    let handlers: HTTP2StreamHandlers
    private(set) var context: ChannelHandlerContext?
    private(set) var remoteAddress: String?
    /// The open streams the lane serves.
    private var streams: [HTTP2StreamID: LaneStream] = [:]

    init(relay: APIRelay, handlers: HTTP2StreamHandlers) {
        self.relay = relay
        self.handlers = handlers
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        remoteAddress = context.channel.remoteAddress?.ipAddress
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        endAll()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if streams[frame.streamID] != nil {
            // A served stream's request has ended: what comes for it is flow control (NIOHTTP2's) or its reset,
            // whose close the stream learns of by `StreamClosedEvent`.
            return
        }
        guard case .headers(let headers) = frame.payload, headers.endStream,
            let head = LaneStream.simpleHead(headers.headers)
        else {
            context.fireChannelRead(data)
            return
        }
        let stream = LaneStream(id: frame.streamID, lane: self)
        streams[frame.streamID] = stream
        stream.begin(head, frame: frame, context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, let stream = streams.removeValue(forKey: closed.streamID) {
            stream.streamClosed()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        for stream in streams.values { stream.clientWritabilityChanged(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        endAll()
        context.fireChannelInactive()
    }

    /// Gives `stream` to the multiplexer: its HEADERS `frame` is read there as it came, and its stream channel's
    /// handlers get `plan`, the lane's decision of it.
    func handOver(_ stream: LaneStream, frame: HTTP2Frame, plan: (APIRelay.Plan, CredentialMemo?), inReadCycle: Bool) {
        guard let context, streams.removeValue(forKey: stream.id) != nil else { return }
        // The multiplexer sets the stream channel up within this read: its handlers take the plan then.
        handlers.handOverPlan = plan
        context.fireChannelRead(wrapInboundOut(frame))
        handlers.handOverPlan = nil
        // Outside the connection's read cycle (after a decision off the loop), the stream gets the end of this read too.
        if !inReadCycle { context.fireChannelReadComplete() }
    }

    /// The connection ended: every stream it served ends with it.
    private func endAll() {
        let ending = streams.values
        streams = [:]
        for stream in ending { stream.streamClosed() }
    }
}
