package import NIOCore
package import NIOHTTP1

/// Keeps a client connection in the poller's read set while a complete request waits for its answer, so
/// that a keep-alive request costs no `epoll_ctl`.
///
/// `HTTPServerPipelineHandler`, right behind this handler, holds the connection's reads from a request's end
/// to its answer's end, so that one connection cannot pile up requests. NIO then takes the socket out of the
/// poller's read set, and puts it back when the answer is out: two `epoll_ctl` calls for every request,
/// measured with `strace -c` on the relay's hot path. A keep-alive client sends nothing in that wait, so
/// nothing needs holding.
///
/// So, in that wait, this handler asks for one read itself ("read ahead"):
/// - The socket stays in the read set. The next request, which a keep-alive client sends only after the answer,
///   is read as it would have been.
/// - What a pipelining client sends in the wait is read once (one read cycle). It goes on to the pipeline handler, which
///   keeps it as it keeps a second request that came in one read with the first. Nothing more is read until
///   the pipeline handler asks again, so a connection still holds at most one read cycle more than before.
/// - An end of input that the read ahead finds is held back until the handlers behind ask for a read. The relay
///   and the router see a half-close exactly when they did before.
/// - It never reads ahead while a request's body is still coming (that read is the relay's back-pressure),
///   nor after an upgrade or `CONNECT` request, whose next bytes belong to a tunnel, not to HTTP.
package final class ReadInterestKeeper: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// A request's head has come and its end not yet.
    private var requestOpen = false
    /// The handlers behind asked for a read, and no read cycle has begun since.
    private var asked = false
    /// This wait's read ahead is asked for (one per wait: it ends when the handlers behind ask).
    private var readingAhead = false
    /// The read ahead found the end of input; it goes on when the handlers behind ask for a read.
    private var heldInputClosed = false
    /// An upgrade or `CONNECT` request came: the connection is no longer read ahead.
    private var stopped = false

    /// How many reads ahead this connection asked for (tests).
    private(set) var readsAhead = 0

    package init() {}

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestOpen = true
            if head.method == .CONNECT || head.headers.contains(name: "upgrade") { stopped = true }
        case .body: break
        case .end: requestOpen = false
        }
        asked = false
        context.fireChannelRead(data)
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        // (An end of input is held only while reading ahead, so `readingAhead` covers it.)
        guard !stopped, !requestOpen, !readingAhead, !asked, context.channel.isActive else { return }
        // The channel asks the handlers behind for the next read right after this; asking them now tells
        // whether they hold it (a read they pass comes back through ``read(context:)`` and sets `asked`).
        context.pipeline.syncOperations.read()
        guard !asked else { return }
        readingAhead = true
        readsAhead += 1
        context.read()
    }

    package func read(context: ChannelHandlerContext) {
        readingAhead = false
        if heldInputClosed {
            // The read ahead already saw the end: this read's answer is that end.
            heldInputClosed = false
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            return
        }
        asked = true
        context.read()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, readingAhead, !asked {
            heldInputClosed = true
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        heldInputClosed = false
        context.fireChannelInactive()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        if heldInputClosed {
            heldInputClosed = false
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }
}
