import NIOCore

/// Counts the reads a pipeline asks of its channel (put first, next to the channel).
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Any

    private(set) var reads = 0

    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }
}
