import NIOCore

/// One write to the socket for all the answers an HTTP/2 connection's streams finish in one turn of the event
/// loop. A relayed stream's answer is written when its backend's bytes arrive, on the backend's socket, outside
/// the client connection's read: unhelped, each stream's flush went down through HTTP/2 and TLS to a record
/// and a `write` of its own, ten for ten streams whose backends answered together. Sits between TLS and
/// HTTP/2: a flush outside the connection's own read is held until the tasks the event loop runs after this
/// turn's I/O, so the answers of every backend socket that was readable in the same turn leave in one TLS write.
/// Within the connection's read, NIOHTTP2's own multiplexer already batches, and flushes pass at once.
final class HTTP2FlushCoalescer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    private var reading = false
    private var flushHeld = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reading = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // HTTP/2 flushes what the read made as the read completes: that flush passes at once too.
        context.fireChannelReadComplete()
        reading = false
    }

    func flush(context: ChannelHandlerContext) {
        if reading {
            context.flush()
            return
        }
        guard !flushHeld else { return }
        flushHeld = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (coalescer, context) = loopBound.value
            coalescer.release(context: context)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // What was written before a close leaves before it (a GOAWAY, a last answer).
        release(context: context)
        context.close(mode: mode, promise: promise)
    }

    private func release(context: ChannelHandlerContext) {
        guard flushHeld else { return }
        flushHeld = false
        context.flush()
    }
}
