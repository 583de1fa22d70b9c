import GatehouseCore
import GatehouseServer
import NIOCore
import NIOHTTP1

/// The client's side of a ``HeadRelayCommand`` connection: it reads each request head from the bytes with the
/// gateway's ``RequestHeadReader`` and writes the upstream head as bytes (the request line as it came, `Host` set,
/// hop-by-hop fields dropped, `X-Request-Id` added), one exchange at a time.
final class HeadRelayFront: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    var back: HeadRelayBack?
    private var context: ChannelHandlerContext?
    /// Bytes read and not yet relayed.
    private var pending: ByteBuffer?
    /// An exchange is under way: the next request waits for its answer's end.
    private var busy = false
    private var sent = false
    private var requests: UInt64 = 0
    /// `Host: <the backend's authority>`, the field the hop sets.
    private let hostField: String
    private let authority: String
    /// Upstream heads made as the gateway's decision makes them (``HeadRelayCommand``'s `--as-gateway`).
    private let asGateway: Bool

    init(authority: String, asGateway: Bool) {
        hostField = "Host: \(authority)\r\n"
        self.authority = authority
        self.asGateway = asGateway
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        back = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if pending == nil {
            pending = buffer
        } else {
            pending?.writeBuffer(&buffer)
        }
        relayNext()
    }

    func channelReadComplete(context: ChannelHandlerContext) { flushSent() }

    func channelInactive(context: ChannelHandlerContext) { back?.close() }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

    /// The answer's end: the next request may go.
    func answerEnded() {
        busy = false
        relayNext()
        flushSent()
    }

    /// Flushes the backend once for the heads written since the last flush.
    private func flushSent() {
        guard sent else { return }
        sent = false
        back?.flush()
    }

    /// An answer's bytes, from the backend.
    func write(_ buffer: ByteBuffer) { context?.write(wrapOutboundOut(buffer), promise: nil) }

    func flush() { context?.flush() }

    func close() { context?.close(promise: nil) }

    private func relayNext() {
        guard !busy, let context, let back, var buffer = pending else { return }
        requests += 1
        let requestID = String(requests, radix: 16)
        var head: ByteBuffer?
        let allocator = context.channel.allocator
        let parsed: Int? = buffer.readableBytesView.withUnsafeBytes { bytes in
            // The gateway's own reader: the floor measures the parsing a relay engine would do.
            switch RequestHeadReader.read(bytes) {
            case .incomplete: return nil
            case .declined: return -1
            case .read(let view) where asGateway:
                var upstream = allocator.buffer(capacity: view.length + hostField.utf8.count + 32)
                guard let made = upstreamHead(of: view.requestHead(in: bytes), requestID: requestID) else { return -1 }
                UpstreamHeadWriter.write(made, into: &upstream)
                head = upstream
                return view.length
            case .read(let view):
                var upstream = allocator.buffer(capacity: view.length + hostField.utf8.count + 32)
                // The request line: the target, then ` HTTP/1.1` and CR LF.
                upstream.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<view.target.upperBound + 11]))
                upstream.writeString(hostField)
                for field in view.fields {
                    switch HeadRelayFields.handling(of: bytes, field.name.lowerBound, field.name.upperBound) {
                    case .keep:
                        upstream.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[field.name.lowerBound..<field.value.upperBound]))
                        upstream.writeStaticString("\r\n")
                    case .drop: continue
                    // Bodiless requests only.
                    case .contentLength, .transferEncoding: return -1
                    }
                }
                upstream.writeStaticString("X-Request-Id: ")
                upstream.writeString(requestID)
                upstream.writeStaticString("\r\n\r\n")
                head = upstream
                return view.length
            }
        }
        guard let length = parsed else {
            if buffer.readableBytes > 64 * 1024 { context.close(promise: nil) }
            return
        }
        guard length > 0, let head else {
            context.close(promise: nil)
            return
        }
        buffer.moveReaderIndex(forwardBy: length)
        pending = buffer.readableBytes > 0 ? buffer : nil
        busy = true
        sent = true
        back.send(head, requestID: requestID)
    }

    /// The upstream head of `request` as the gateway's decision makes one: a new head, `Host` first, the client's fields
    /// but hop-by-hop ones and those the hop sets, `X-Request-Id` last; `nil` for a request with a body.
    private func upstreamHead(of request: HTTPRequestHead, requestID: String) -> HTTPRequestHead? {
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 2)
        headers.add(name: "Host", value: authority)
        for (name, value) in request.headers {
            switch Self.handling(of: name) {
            case .keep: headers.add(name: name, value: value)
            case .drop: continue
            case .contentLength, .transferEncoding: return nil
            }
        }
        headers.add(name: "X-Request-Id", value: requestID)
        return HTTPRequestHead(version: .http1_1, method: request.method, uri: request.uri, headers: headers)
    }

    private static func handling(of name: String) -> HeadRelayFields.Handling {
        var name = name
        return name.withUTF8 { HeadRelayFields.handling(of: UnsafeRawBufferPointer($0), 0, $0.count) }
    }
}
