import Foundation
import GatehouseCore
import Logging
import NIOCore
import NIOHTTP1
import Prometheus

/// How an exchange of ``APIRelayHandler`` ends: the answer's end, the relay's own answers and refusals, a tunnel,
/// a failure, the client leaving; and the access-log line of each.
extension APIRelayHandler {
    func finish(
        _ connection: UpstreamConnection?, reuse: Bool, record: Machine.Record, closeClient: Bool, context: ChannelHandlerContext
    ) {
        if let connection {
            if reuse, let source = source(of: record.entry.upstream) {
                source.release(connection)
            } else {
                connection.close()
            }
        }
        self.record(record)
        // The machine moved on before the end is written: writing it lets the pipeline handler deliver the
        // next request, into this handler, at once.
        // `Connection: close` from the client (or HTTP/1.0 semantics): the connection ends with this answer.
        writeEnd(context, close: closeClient)
        if !closeClient { resumeReading() }
    }

    /// Writes an answer's end; the client's connection ends with it when `close`. A future only then: one per
    /// answer would cost an allocation and a type-metadata look-up on the relay's hot path.
    func writeEnd(_ context: ChannelHandlerContext, close: Bool) {
        guard close else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        closingClient = true
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// An answer the relay gives itself (forward authentication from memory): no body; what is left of the
    /// request is dropped.
    func answer(_ head: HTTPResponseHead, entry: APIRelay.Entry, keepAlive: Bool) {
        guard let context else { return }
        relay.accessLog.record(
            method: entry.method, route: entry.route, status: Int(head.status.code), duration: .zero,
            provider: entry.provider, sessionID: entry.sessionID, requestID: entry.requestID, upstream: entry.app,
            traceID: entry.finishTrace(status: Int(head.status.code), upstream: entry.app))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        writeEnd(context, close: !keepAlive)
    }

    /// A refusal of the one decision, answered here: the problem document, the access-log line. The
    /// connection ends with the answer when `close`.
    func refuse(_ error: GatehouseError, entry: APIRelay.Entry, head: HTTPRequestHead, close: Bool) {
        guard let context else { return }
        if entry.route == APIRelay.route { relay.metrics.relayedRefusals.increment() }
        relay.accessLog.record(
            method: entry.method, route: entry.route, status: error.status, duration: .zero,
            provider: entry.provider, sessionID: entry.sessionID, requestID: entry.requestID, upstream: entry.app,
            traceID: entry.finishTrace(status: error.status, upstream: entry.app))
        let body = Problem.body(error, requestID: entry.requestID)
        var responseHead = relay.problemHead(error, bodyLength: body.readableBytes, close: close, requestID: entry.requestID)
        for (name, value) in entry.answerFields { responseHead.headers.add(name: name, value: value) }
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        // A HEAD answer has the fields of the GET answer and no body (RFC 9110 §9.3.2).
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        writeEnd(context, close: close)
    }

    /// The backend switched protocols: both connections leave HTTP and are joined byte for byte.
    func tunnel(_ connection: UpstreamConnection, context: ChannelHandlerContext) {
        connection.handler.receiver = nil
        connection.setReading(true)
        // The `101` goes out through the HTTP encoder before any tunnelled byte (writes keep their order).
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        let (clientEnd, upstreamEnd) = TunnelHandler.pair()
        do {
            // The client's decoder parses nothing after an upgrade request: bytes read from now on reach the
            // tunnel first, in front of the HTTP handlers (which stay, idle, until the connection closes).
            // Behind TLS, the tunnel goes after it: right in front of the HTTP handlers' ``RequestLineWatcher``.
            let plain = try? context.pipeline.syncOperations.handler(type: RequestLineWatcher.self)
            try context.pipeline.syncOperations.addHandler(clientEnd, position: plain.map { .before($0) } ?? .first)
            // The backend's decoder holds whatever came after the `101` in the same read; removing it hands
            // those bytes on (`leftOverBytesStrategy: .forwardBytes`) to the tunnel, which is already there.
            let upstream = connection.channel.pipeline.syncOperations
            _ = upstream.removeHandler(connection.handler)
            try upstream.addHandler(upstreamEnd)
            _ = upstream.removeHandler(try upstream.handler(type: HTTPRequestEncoder.self))
            // The decoder leaves on a later tick of the loop and hands its bytes on then, outside any read
            // cycle of the backend connection: nothing flushes them but this.
            upstream.removeHandler(try upstream.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self))
                .assumeIsolated().whenComplete { _ in context.flush() }
            relay.metrics.upgradedConnections.increment()
        } catch {
            relay.logger.warning("the upgraded connection could not be joined", metadata: ["error": "\(error)"])
            connection.close()
            context.close(promise: nil)
        }
    }

    /// Ends the exchange with a problem answer, or by closing the client's connection when part of the
    /// answer is out.
    func fail(_ failure: Machine.Failure) {
        guard let context else { return }
        switch failure.cause {
        case .requestUnreadable:
            relay.logger.info("the client's request body could not be read; nothing more was sent upstream")
        case .bodyTooLarge:
            break
        case .unframedBody:
            relay.logger.warning("a request body came after a head forwarded without framing; its backend connection is closed")
        case .upstreamUnreachable(let error):
            relay.metrics.upstreamErrors.increment()
            if let entry = failure.entry { relay.metrics.upstreamFailed(APIRelay.label(entry.upstream)) }
            relay.logger.warning("upstream request failed", metadata: ["upstream": "\(failure.entry.map(redacted) ?? "")", "error": "\(error)"])
        case .upstreamTimeout:
            relay.metrics.upstreamErrors.increment()
            if let entry = failure.entry { relay.metrics.upstreamFailed(APIRelay.label(entry.upstream)) }
        case .invalidSwitch:
            relay.metrics.upstreamErrors.increment()
            relay.logger.warning(
                "the upstream switched protocols without completing a WebSocket handshake; its connection was closed",
                metadata: ["upstream": "\(failure.entry.map(redacted) ?? "")", "request_id": "\(failure.entry?.requestID ?? "")"])
        }
        failure.connection?.close()
        if failure.responseStarted {
            context.close(promise: nil)
            if let record = failure.record { self.record(record) }
            return
        }
        let requestID = failure.entry?.requestID ?? RequestIdentifier.make()
        if let record = failure.record { self.record(record) }
        let body = Problem.body(failure.error, requestID: requestID)
        let head = relay.problemHead(failure.error, bodyLength: body.readableBytes, close: failure.closing, requestID: requestID)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if failure.withBody { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        // As in `finish`: the machine moved on before the end (which may deliver the next request) is written.
        writeEnd(context, close: failure.closing)
        if !failure.closing { resumeReading() }
    }

    /// The client left (or the handler was removed): drop the backend connection (it is mid-request).
    func clientClosed() {
        timer?.cancel()
        timer = nil
        guard let closed = machine.clientClosed() else { return }
        closed.connection?.close()
        record(closed.record)
    }

    /// The exchange's access-log line and request metrics.
    func record(_ record: Machine.Record) {
        relay.recordRelayed(record.entry, status: record.status, started: record.started)
    }

    /// The upstream URL without credentials or query, for log lines.
    func redacted(_ entry: APIRelay.Entry) -> String {
        entry.upstream?.relayTarget?.redacted ?? APIRelay.label(entry.upstream)
    }

    func resumeReading() {
        guard let context, machine.resumeReading() else { return }
        context.read()
    }
}
