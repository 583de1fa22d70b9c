import GatehouseCore
import NIOCore

/// The backend's answer on the lane: its head read from the bytes and the client's written as bytes, its body passed
/// on by its framing.
extension RelayLane {
    func laneReceived(_ bytes: ByteBuffer) {
        guard let context, let exchange else { return }
        var buffer = bytes
        while true {
            switch exchange.answer {
            case .head(let kept):
                if var kept {
                    exchange.answer = .head(nil)
                    kept.writeBuffer(&buffer)
                    buffer = kept
                }
                guard readHead(&buffer, exchange, context: context) else { return }
            case .length(let left):
                let count = min(left, buffer.readableBytes)
                if count > 0, let part = buffer.readSlice(length: count) { context.write(wrapOutboundOut(part), promise: nil) }
                exchange.answer = .length(left: left - count)
                if left == count { answerEnded(exchange, leftOver: buffer.readableBytes > 0, context: context) }
                return
            case .chunked(var scanner):
                exchange.answer = .untilClose
                let step = buffer.readableBytesView.withUnsafeBytes { scanner.scan($0) { _ in } }
                exchange.answer = .chunked(scanner)
                switch step {
                case .needMore:
                    context.write(wrapOutboundOut(buffer), promise: nil)
                case .ended(let at):
                    if let part = buffer.readSlice(length: at) { context.write(wrapOutboundOut(part), promise: nil) }
                    answerEnded(exchange, leftOver: buffer.readableBytes > 0, context: context)
                case .invalid:
                    // Nobody can tell where the answer ends: neither connection can carry another one.
                    broken(exchange, reason: "the upstream's chunked body could not be read")
                }
                return
            case .untilClose:
                writeChunk(buffer, context: context)
                return
            }
        }
    }

    func laneReadComplete() {
        guard let context, let exchange, exchange.answerStarted else { return }
        context.flush()
        // Back-pressure: the backend is read only while the client takes what comes.
        if !context.channel.isWritable { exchange.connection?.setReading(false) }
    }

    func laneFailed(_ error: any Error) {
        guard let context, let exchange else { return }
        if case .untilClose = exchange.answer, error is LaneConnectionHandler.Closed {
            // The backend's close ends this body.
            context.write(wrapOutboundOut(ByteBuffer(staticString: "0\r\n\r\n")), promise: nil)
            exchange.upstreamKeepAlive = false
            finish(exchange, reuse: false, context: context)
            return
        }
        if exchange.answerStarted {
            abandon(exchange)
            return
        }
        if exchange.reused, exchange.attempts == 1 {
            // The backend closed a kept-alive connection as the request went out: nothing was processed, and a
            // `GET` is sent again once, on a new connection (RFC 9110 §9.2.2).
            exchange.connection?.close()
            exchange.connection = nil
            exchange.answer = .head(nil)
            retry(exchange)
            return
        }
        unreachable(exchange, error)
    }

    /// Reads an answer head off `buffer` and writes the client's: `false` when nothing more can be done with the
    /// bytes now (the head is incomplete, or the answer failed).
    private func readHead(_ buffer: inout ByteBuffer, _ exchange: LaneExchange, context: ChannelHandlerContext) -> Bool {
        let allocator = context.channel.allocator
        let (requestID, clientClose, hsts) = (exchange.entry.requestID, !exchange.clientKeepAlive || quiescing, hsts)
        let outcome: HeadOutcome = buffer.readableBytesView.withUnsafeBytes { bytes in
            switch ResponseHeadReader.read(bytes) {
            case .incomplete: return .incomplete
            case .declined: return .declined
            case .read(let view):
                let final = view.status >= 200
                var head = allocator.buffer(capacity: view.length + 128)
                AnswerHeadWriter.write(
                    view, of: bytes, requestID: final ? requestID : nil, close: final && clientClose, hsts: final ? hsts : nil, into: &head)
                var closes = false
                HopByHopHeaders.forEachConnectionToken(bytes, in: view.fields) { closes = closes || HeadBytes.equalIgnoringCase(bytes, $0, "close") }
                let keepAlive = !view.http10 && !closes
                return .read(head, length: view.length, status: view.status, framing: view.framing, keepAlive: keepAlive)
            }
        }
        switch outcome {
        case .incomplete:
            if buffer.readableBytes > 0 { exchange.answer = .head(buffer) }
            return false
        case .declined:
            broken(exchange, reason: "the upstream's answer head is not one the relay passes on")
            return false
        case .read(let head, let length, let status, let framing, let keepAlive):
            buffer.moveReaderIndex(forwardBy: length)
            exchange.answerStarted = true
            context.write(wrapOutboundOut(head), promise: nil)
            // Other 1xx are passed on; the final answer follows.
            guard status >= 200 else { return true }
            relay.metrics.upstream(APIRelay.label(exchange.entry.upstream), duration: ContinuousClock.now - exchange.started)
            exchange.status = status
            exchange.upstreamKeepAlive = keepAlive
            exchange.closeClient = clientClose
            switch framing {
            case .bodiless: exchange.answer = .length(left: 0)
            case .length(let count): exchange.answer = .length(left: count)
            case .chunked: exchange.answer = .chunked(ChunkedBodyScanner())
            case .untilClose:
                exchange.answer = .untilClose
                exchange.upstreamKeepAlive = false
                writeChunk(buffer, context: context)
                return false
            }
            return true
        }
    }

    private enum HeadOutcome {
        case incomplete
        case declined
        case read(ByteBuffer, length: Int, status: Int, framing: ResponseFraming, keepAlive: Bool)
    }

    /// A body that ends with the backend's connection goes to the client in chunks (as NIOHTTP1's encoder sends it).
    private func writeChunk(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard buffer.readableBytes > 0 else { return }
        var size = context.channel.allocator.buffer(capacity: 18)
        size.writeString(String(buffer.readableBytes, radix: 16))
        size.writeStaticString("\r\n")
        context.write(wrapOutboundOut(size), promise: nil)
        context.write(wrapOutboundOut(buffer), promise: nil)
        context.write(wrapOutboundOut(ByteBuffer(staticString: "\r\n")), promise: nil)
    }
}
