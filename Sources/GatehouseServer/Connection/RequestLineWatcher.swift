import NIOCore
import NIOHTTP1

/// Tells one fact that the HTTP/1.1 decoder's error does not carry: whether the request it gave up on has a
/// request line over the URL limit. The decoder counts the request line and the fields against one budget
/// (80 KiB) and says only `headerOverflow`, so without this a 100 KB request line would be answered 431
/// where a 17 KB one gets 414.
///
/// It sits in front of the decoder and counts the bytes of each request line up to its LF; the decoder's
/// side (``Boundaries``, right behind the decoder) says where a request ends, so the next bytes start a
/// request line. ``MalformedRequestHandler`` asks ``overlongRequestLine`` when the decoder fails.
///
/// With pipelined requests in one read the next request's first bytes pass before its predecessor's end is
/// seen; then only the rest of its line is counted. A line long enough to overflow the decoder spans reads,
/// so its remainder alone is still over any URL limit the configuration allows.
final class RequestLineWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let maxURLBytes: Int
    /// Bytes of the current request line so far; `nil` while the bytes are fields or a body.
    private var lineBytes: Int? = 0
    private var overlong = false

    init(maxURLBytes: Int) {
        self.maxURLBytes = maxURLBytes
    }

    /// Whether the request being read has (or is reading) a request line over the URL limit.
    var overlongRequestLine: Bool {
        overlong || (lineBytes ?? 0) > maxURLBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let counted = lineBytes {
            let buffer = unwrapInboundIn(data)
            if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                let total = counted + (newline - buffer.readerIndex)
                overlong = overlong || total > maxURLBytes
                lineBytes = nil
            } else {
                lineBytes = counted + buffer.readableBytes
            }
        }
        context.fireChannelRead(data)
    }

    /// The decoder's side: a request's end means the next bytes are a request line.
    final class Boundaries: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart

        private let watcher: RequestLineWatcher

        init(_ watcher: RequestLineWatcher) {
            self.watcher = watcher
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .end = unwrapInboundIn(data) {
                watcher.lineBytes = 0
                watcher.overlong = false
            }
            context.fireChannelRead(data)
        }
    }
}
