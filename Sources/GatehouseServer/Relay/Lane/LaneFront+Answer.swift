import GatehouseCore
import NIOCore

/// The backend's answer on the lane: its head read from the bytes, its body followed by its framing; what the client
/// gets of them each front writes (``LaneFront/writeHead(_:of:_:context:)``, ``LaneFront/writeBody(_:last:_:context:)``).
extension LaneFront {
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
                exchange.answer = .length(left: left - count)
                if let part = buffer.readSlice(length: count) { writeBody(part, last: left == count, exchange, context: context) }
                if left == count { answerEnded(exchange, leftOver: buffer.readableBytes > 0, context: context) }
                return
            case .chunked(let scanner):
                readChunks(buffer, scanner, exchange, context: context)
                return
            case .untilClose:
                writeBody(buffer, last: false, exchange, context: context)
                return
            }
        }
    }

    /// A chunked body's next bytes: passed on in their chunks, or as the chunks' data.
    private func readChunks(_ buffer: ByteBuffer, _ scanner: ChunkedBodyScanner, _ exchange: LaneExchange, context: ChannelHandlerContext) {
        var scanner = scanner
        var data: [Range<Int>] = []
        let step = buffer.readableBytesView.withUnsafeBytes { bytes in
            Self.passesChunks ? scanner.scan(bytes) { _ in } : scanner.scan(bytes) { data.append($0) }
        }
        exchange.answer = .chunked(scanner)
        let (end, ended): (Int, Bool)
        switch step {
        case .needMore: (end, ended) = (buffer.readableBytes, false)
        case .ended(let at): (end, ended) = (at, true)
        case .invalid:
            // Nobody can tell where the answer ends: neither connection can carry another one.
            broken(exchange, reason: "the upstream's chunked body could not be read")
            return
        }
        if Self.passesChunks {
            writeBody(buffer.getSlice(at: buffer.readerIndex, length: end)!, last: ended, exchange, context: context)
        } else {
            for (index, range) in data.enumerated() {
                let part = buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count)!
                writeBody(part, last: ended && index == data.count - 1, exchange, context: context)
            }
            if ended, data.isEmpty { writeBody(ByteBuffer(), last: true, exchange, context: context) }
        }
        if ended { answerEnded(exchange, leftOver: end < buffer.readableBytes, context: context) }
    }

    func laneReadComplete() {
        guard let context, let exchange, exchange.answerStarted else { return }
        flushAnswer(context: context)
        // Back-pressure: the backend is read only while the client takes what comes.
        if !clientTakes(context: context) { exchange.connection?.setReading(false) }
    }

    func laneFailed(_ error: any Error) {
        guard let context, let exchange else { return }
        if case .untilClose = exchange.answer, error is LaneConnectionHandler.Closed {
            // The backend's close ends this body.
            writeBody(ByteBuffer(), last: true, exchange, context: context)
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
    /// bytes now (the head is incomplete, the answer failed, or its body ends with the connection).
    private func readHead(_ buffer: inout ByteBuffer, _ exchange: LaneExchange, context: ChannelHandlerContext) -> Bool {
        let outcome: LaneExchange.HeadOutcome = buffer.readableBytesView.withUnsafeBytes { bytes in
            switch ResponseHeadReader.read(bytes) {
            case .incomplete: return .incomplete
            case .declined: return .declined
            case .read(let view):
                writeHead(view, of: bytes, exchange, context: context)
                var closes = false
                HopByHopHeaders.forEachConnectionToken(bytes, in: view.fields) { closes = closes || HeadBytes.equalIgnoringCase(bytes, $0, "close") }
                return .read(length: view.length, status: view.status, framing: view.framing, keepAlive: !view.http10 && !closes)
            }
        }
        switch outcome {
        case .incomplete:
            if buffer.readableBytes > 0 { exchange.answer = .head(buffer) }
            return false
        case .declined:
            broken(exchange, reason: "the upstream's answer head is not one the relay passes on")
            return false
        case .read(let length, let status, let framing, let keepAlive):
            buffer.moveReaderIndex(forwardBy: length)
            exchange.answerStarted = true
            // Other 1xx are passed on; the final answer follows.
            guard status >= 200 else { return true }
            relay.metrics.upstream(APIRelay.label(exchange.entry.upstream), duration: ContinuousClock.now - exchange.started)
            exchange.status = status
            exchange.upstreamKeepAlive = keepAlive
            switch framing {
            case .bodiless: exchange.answer = .length(left: 0)
            case .length(let count): exchange.answer = .length(left: count)
            case .chunked: exchange.answer = .chunked(ChunkedBodyScanner())
            case .untilClose:
                exchange.answer = .untilClose
                exchange.upstreamKeepAlive = false
                if buffer.readableBytes > 0 { writeBody(buffer, last: false, exchange, context: context) }
                return false
            }
            return true
        }
    }
}
