import GatehouseCore
import Logging
import NIOCore
import NIOHTTP1
import Prometheus

/// The event-loop relay for `/v1/api/…`: for each request it claims (``APIRelay``), it takes a keep-alive
/// backend connection from its loop's ``UpstreamConnectionPool``, writes the rewritten head and streams the
/// body, and streams the answer back — no task, no thread change, no copy of a body. Requests it does not
/// claim go on to the router untouched.
///
/// Flow control: the client is read only while the backend connection can take more, and the backend only
/// while the client can. A request lost by a reused connection before any answer is sent again once on a
/// new connection when its method is idempotent and its body was kept (RFC 9110 §9.2.2); never otherwise.
/// The backend has `upstreamTimeout` to start its answer (then 504); an unreachable one gives 502.
///
/// A WebSocket handshake (``APIRelay/Decision/upgrade(_:)``) goes out the same way; after the backend's `101`
/// (only one that completes the handshake, ``WebSocketHandshake``; any other is a 502) both connections leave HTTP and a ``TunnelHandler`` pair carries their bytes until either side closes.
/// Any other answer to a handshake ends the client's connection (its HTTP decoder stops after an upgrade
/// request), as does the router's answer to any upgrade request the relay did not take.
///
/// `HTTPServerPipelineHandler`, in front of this handler, delivers one request at a time, so the relay's
/// answers and the router's never interleave.
final class APIRelayHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamReceiver {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let relay: APIRelay
    private let pool: NIOLoopBound<UpstreamConnectionPool>
    private let remoteAddress: String?
    private var context: ChannelHandlerContext?

    private enum State {
        /// Between requests.
        case idle
        /// The current request is the router's, up to its end.
        case passing
        /// The request became a tunnel: nothing more is HTTP.
        case tunnelled
        /// Waiting for ``APIRelay/decideAsync(_:remoteAddress:)``; the parts read meanwhile are kept.
        case resolving([HTTPServerRequestPart])
        /// The relay owns the request: ``exchange`` is set.
        case relaying
        /// The answer is out; what is left of the request is dropped.
        case discarding
    }

    /// One relayed request.
    private final class Exchange {
        let head: HTTPRequestHead
        /// For the access log.
        let entry: APIRelay.Entry
        let started = ContinuousClock.now
        /// The status the client got (0 until the answer's head went out).
        var status = 0
        let idempotent: Bool
        /// The client keeps the connection after this exchange (else it is closed after the answer).
        let clientKeepAlive: Bool
        /// A WebSocket handshake: a `101` that completes it (``WebSocketHandshake``) turns the exchange into a tunnel.
        let upgrade: Bool
        /// The `Sec-WebSocket-Accept` the backend must send with its `101`.
        let expectedAccept: String?
        /// The backend said `101`: the tunnel opens at the end of its head.
        var switching = false
        var connection: UpstreamConnection?
        var attempts = 0
        /// Body parts read before the connection was ready.
        var unsent: [ByteBuffer] = []
        /// Every body part so far, while small enough to send again; `nil` once it is not.
        var kept: [ByteBuffer]? = []
        var keptBytes = 0
        var bodyBytes = 0
        var requestComplete = false
        /// Something of the answer went to the client.
        var responseStarted = false
        var upstreamKeepAlive = true
        /// When the backend must have started its answer (`upstream_timeout_seconds` after the request went out).
        var deadline = NIODeadline.distantFuture

        init(head: HTTPRequestHead, entry: APIRelay.Entry, clientKeepAlive: Bool, upgrade: Bool) {
            self.head = head
            self.entry = entry
            self.clientKeepAlive = clientKeepAlive
            self.upgrade = upgrade
            expectedAccept = upgrade ? WebSocketHandshake.expectedAccept(of: head) : nil
            switch head.method {
            case .GET, .HEAD, .PUT, .DELETE, .OPTIONS, .TRACE: idempotent = true
            default: idempotent = false
            }
        }
    }

    private var state = State.idle
    private var exchange: Exchange?
    /// The session this connection's last request presented (``APIRelay/Memo``).
    private var memo: APIRelay.Memo?
    /// One timer per connection, not per request (scheduling and cancelling one per request cost 3 % of the
    /// relay's CPU): when it fires it ends an exchange past its deadline, or waits for the current one's.
    private var timer: Scheduled<Void>?
    /// A read the channel asked for while the relay could not take more.
    private var readPending = false
    /// The router is answering an upgrade request (or `CONNECT`): the decoder reads nothing after it, so
    /// the connection ends with the answer.
    private var closeAfterPassedResponse = false
    /// The pools of the other upstreams (`upstreams:`) on this loop, by position, taken when first needed.
    private var otherPools: [Int: NIOLoopBound<UpstreamConnectionPool>] = [:]

    init(relay: APIRelay, pool: NIOLoopBound<UpstreamConnectionPool>, remoteAddress: String?) {
        self.relay = relay
        self.pool = pool
        self.remoteAddress = remoteAddress
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        abandonExchange()
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    // MARK: From the client

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state {
        case .idle:
            guard case .head(let head) = part else {
                context.fireChannelRead(data)
                return
            }
            if head.uri.hasPrefix(ForwardAuthTarget.prefix), let answered = relay.authorize(head, remoteAddress: remoteAddress, memo: &memo) {
                relay.metrics.relayedAuthz.increment()
                switch answered {
                case .allowed(let authorized, let entry): answer(authorized, entry: entry, keepAlive: head.isKeepAlive)
                case .refused(let error, let fields, let entry):
                    refuse(error, entry: entry, head: head, requestComplete: false, route: APIRelay.authzRoute, fields: fields)
                }
                return
            }
            switch relay.decide(head, remoteAddress: remoteAddress, memo: &memo) {
            case .pass:
                state = .passing
                if head.method == .CONNECT || head.headers.contains(name: "upgrade") { closeAfterPassedResponse = true }
                context.fireChannelRead(data)
            case .forward(let upstreamHead, let entry):
                start(upstreamHead, entry: entry, clientKeepAlive: head.isKeepAlive, upgrade: false)
            case .upgrade(let upstreamHead, let entry):
                start(upstreamHead, entry: entry, clientKeepAlive: false, upgrade: true)
            case .refuse(let error, let entry):
                refuse(error, entry: entry, head: head, requestComplete: false)
            case .spend(let proof, let decision):
                // Only the proof's record leaves the loop; the parts read meanwhile are kept.
                state = .resolving([part])
                let (relay, remoteAddress) = (relay, remoteAddress)
                relay.spend(proof, then: decision, head, remoteAddress: remoteAddress, on: context.eventLoop)
                    .assumeIsolated().whenSuccess { decision in self.resolved(decision) }
            case .resolveAsync:
                state = .resolving([part])
                let (relay, remoteAddress) = (relay, remoteAddress)
                context.eventLoop.makeFutureWithTask { await relay.decideAsync(head, remoteAddress: remoteAddress) }
                    .assumeIsolated().whenSuccess { decision in self.resolved(decision) }
            }
        case .passing:
            if case .end = part { state = .idle }
            context.fireChannelRead(data)
        case .resolving(var parts):
            parts.append(part)
            state = .resolving(parts)
        case .relaying:
            received(part)
        case .discarding:
            if case .end = part { state = .idle }
        case .tunnelled:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .relaying = state { exchange?.connection?.flush() }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        switch state {
        case .resolving:
            readPending = true
        case .relaying:
            guard let connection = exchange?.connection, connection.isWritable else {
                readPending = true
                return
            }
            context.read()
        case .idle, .passing, .discarding, .tunnelled:
            context.read()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard closeAfterPassedResponse else {
            context.write(data, promise: promise)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            closeAfterPassedResponse = false
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        case .head, .body:
            context.write(data, promise: promise)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if case .relaying = state, let exchange, exchange.responseStarted {
            exchange.connection?.setReading(context.channel.isWritable)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        abandonExchange()
        timer?.cancel()
        timer = nil
        state = .idle
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .relaying, .resolving:
            // The client's own request broke (a malformed chunk): nothing more can be read from it.
            relay.logger.info("the client's request body could not be read; nothing more was sent upstream")
            fail(GatehouseError.invalidRequest("The request body could not be read."), closing: true)
        case .idle, .passing, .discarding, .tunnelled:
            context.fireErrorCaught(error)
        }
    }

    // MARK: The decision

    private func resolved(_ decision: APIRelay.Decision) {
        guard let context, case .resolving(let parts) = state else { return }
        switch decision {
        case .forward(let upstreamHead, let entry):
            guard case .head(let head) = parts.first else { return }
            start(upstreamHead, entry: entry, clientKeepAlive: head.isKeepAlive, upgrade: false)
            for part in parts.dropFirst() { received(part) }
            exchange?.connection?.flush()
        case .upgrade(let upstreamHead, let entry):
            start(upstreamHead, entry: entry, clientKeepAlive: false, upgrade: true)
            for part in parts.dropFirst() { received(part) }
            exchange?.connection?.flush()
        case .refuse(let error, let entry):
            guard case .head(let head) = parts.first else { return }
            let complete = parts.contains { if case .end = $0 { true } else { false } }
            refuse(error, entry: entry, head: head, requestComplete: complete)
            resumeReading()
        case .pass, .resolveAsync, .spend:
            state = .passing
            if case .head(let head) = parts.first, head.method == .CONNECT || head.headers.contains(name: "upgrade") {
                closeAfterPassedResponse = true
            }
            for part in parts {
                if case .end = part { state = .idle }
                context.fireChannelRead(wrapInboundOut(part))
            }
            context.fireChannelReadComplete()
            resumeReading()
        }
    }

    // MARK: The exchange

    private func start(_ upstreamHead: HTTPRequestHead, entry: APIRelay.Entry, clientKeepAlive: Bool, upgrade: Bool) {
        state = .relaying
        exchange = Exchange(head: upstreamHead, entry: entry, clientKeepAlive: clientKeepAlive, upgrade: upgrade)
        relay.metrics.proxiedRequests.increment()
        relay.metrics.relayedRequests.increment()
        connect(fresh: false)
    }

    /// The pool of the exchange's upstream on this loop.
    private func pool(of exchange: Exchange) -> UpstreamConnectionPool? {
        let upstream = exchange.entry.upstream
        guard upstream != 0 else { return pool.value }
        if let kept = otherPools[upstream] { return kept.value }
        guard let eventLoop = context?.eventLoop, let found = relay.pools.pool(upstream: upstream, for: eventLoop) else { return nil }
        otherPools[upstream] = found
        return found.value
    }

    private func connect(fresh: Bool) {
        guard let exchange, let pool = pool(of: exchange) else { return }
        let connecting = fresh ? pool.connect() : pool.acquire()
        connecting.whenComplete { result in
            switch result {
            case .success(let connection):
                guard self.exchange === exchange else {
                    // The exchange ended (the client left) while connecting.
                    connection.close()
                    return
                }
                self.send(exchange, on: connection)
            case .failure(let error):
                guard self.exchange === exchange else { return }
                self.upstreamUnreachable(error)
            }
        }
    }

    private func send(_ exchange: Exchange, on connection: UpstreamConnection) {
        exchange.connection = connection
        exchange.attempts += 1
        connection.handler.receiver = self
        connection.setReading(context?.channel.isWritable ?? true)
        connection.write(.head(exchange.head))
        // A second attempt sends everything kept; the first, what arrived while connecting.
        let parts = exchange.attempts > 1 ? (exchange.kept ?? []) : exchange.unsent
        exchange.unsent = []
        for part in parts { connection.write(.body(.byteBuffer(part))) }
        if exchange.requestComplete { connection.write(.end(nil)) }
        connection.flush()
        exchange.deadline = .now() + .milliseconds(Int64(relay.upstreams.all[exchange.entry.upstream].timeout * 1000))
        armTimer(at: exchange.deadline)
        resumeReading()
    }

    private func armTimer(at deadline: NIODeadline) {
        guard timer == nil, let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        timer = nil
        // No request out (between requests, or connecting again): `send` arms the timer when one goes out.
        guard let exchange, exchange.connection != nil, !exchange.responseStarted else { return }
        guard NIODeadline.now() >= exchange.deadline else {
            armTimer(at: exchange.deadline)
            return
        }
        relay.metrics.upstreamErrors.increment()
        relay.metrics.upstreamFailed(relay.upstreams.all[exchange.entry.upstream].name)
        fail(GatehouseError.gatewayTimeout("The upstream did not answer in time."), closing: !exchange.requestComplete)
    }

    /// A part of the client's request while the relay owns it.
    private func received(_ part: HTTPServerRequestPart) {
        guard let exchange else { return }
        switch part {
        case .head:
            break
        case .body(let buffer):
            exchange.bodyBytes += buffer.readableBytes
            guard exchange.bodyBytes <= relay.settings.maxBodyBytes else {
                fail(GatehouseError.payloadTooLarge("The request body exceeds \(relay.settings.maxBodyBytes) bytes."), closing: true)
                return
            }
            if exchange.kept != nil {
                exchange.keptBytes += buffer.readableBytes
                if exchange.idempotent, exchange.keptBytes <= relay.settings.replayLimitBytes {
                    exchange.kept?.append(buffer)
                } else {
                    exchange.kept = nil
                }
            }
            if let connection = exchange.connection {
                connection.write(.body(.byteBuffer(buffer)))
            } else {
                exchange.unsent.append(buffer)
            }
        case .end:
            exchange.requestComplete = true
            if let connection = exchange.connection {
                connection.write(.end(nil))
                connection.flush()
            }
        }
    }

    // MARK: From the backend

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        guard let context, let exchange else { return }
        switch part {
        case .head(let head):
            if head.status == .switchingProtocols {
                // A switch nobody asked for, or one that is not this WebSocket handshake's, would leave the
                // client a raw connection to the backend: 502, and the backend's connection is closed.
                guard exchange.upgrade, WebSocketHandshake.completes(head, expectedAccept: exchange.expectedAccept) else {
                    relay.metrics.upstreamErrors.increment()
                    relay.logger.warning(
                        "the upstream switched protocols without completing a WebSocket handshake; its connection was closed",
                        metadata: ["upstream": "\(redacted(exchange))", "request_id": "\(exchange.entry.requestID)"])
                    fail(GatehouseError.badGateway("The upstream switched protocols without a valid WebSocket handshake."), closing: true)
                    return
                }
                exchange.responseStarted = true
                exchange.switching = true
                exchange.status = 101
                var clientHead = relay.clientHead(of: head)
                clientHead.headers.add(name: "X-Request-Id", value: exchange.entry.requestID)
                context.write(wrapOutboundOut(.head(clientHead)), promise: nil)
                return
            }
            if head.status.code < 200 {
                // Other 1xx are passed on; the final answer follows.
                exchange.responseStarted = true
                context.write(wrapOutboundOut(.head(relay.clientHead(of: head))), promise: nil)
                return
            }
            exchange.responseStarted = true
            exchange.upstreamKeepAlive = head.isKeepAlive
            exchange.status = Int(head.status.code)
            relay.metrics.upstream(relay.upstreams.all[exchange.entry.upstream].name, duration: ContinuousClock.now - exchange.started)
            var clientHead = relay.clientHead(of: head)
            clientHead.headers.add(name: "X-Request-Id", value: exchange.entry.requestID)
            if !exchange.clientKeepAlive { clientHead.headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(clientHead)), promise: nil)
        case .body(let buffer):
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        case .end:
            if exchange.switching {
                tunnel(exchange)
            } else {
                finish(exchange)
            }
        }
    }

    func upstreamReadComplete() {
        guard let context, let exchange else { return }
        context.flush()
        if !context.channel.isWritable { exchange.connection?.setReading(false) }
    }

    func upstreamWritabilityChanged(_ isWritable: Bool) {
        if isWritable { resumeReading() }
    }

    func upstreamFailed(_ error: any Error) {
        guard let exchange, let connection = exchange.connection else { return }
        connection.close()
        exchange.connection = nil
        if exchange.responseStarted {
            // Part of the answer is out: the client can only learn of the failure by the connection's end.
            self.exchange = nil
            state = .discarding
            context?.close(promise: nil)
            return
        }
        if connection.reused, exchange.attempts == 1, exchange.idempotent, exchange.kept != nil {
            // The backend closed a kept-alive connection as the request went out: nothing was processed.
            connect(fresh: true)
            return
        }
        upstreamUnreachable(error)
    }

    // MARK: Endings

    private func finish(_ exchange: Exchange) {
        guard let context else { return }
        if let connection = exchange.connection {
            if exchange.requestComplete, exchange.upstreamKeepAlive {
                pool(of: exchange)?.release(connection)
            } else {
                connection.close()
            }
        }
        record(exchange)
        // The state moves on before the end is written: writing it lets the pipeline handler deliver the
        // next request, into this handler, at once.
        self.exchange = nil
        state = exchange.requestComplete ? .idle : .discarding
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !exchange.clientKeepAlive {
            // `Connection: close` from the client (or HTTP/1.0 semantics): the connection ends with this answer.
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        resumeReading()
    }

    /// An answer the relay gives itself (forward authentication from memory): no body; what is left of the
    /// request is dropped.
    private func answer(_ head: HTTPResponseHead, entry: APIRelay.Entry, keepAlive: Bool) {
        guard let context else { return }
        relay.accessLog.record(
            method: entry.method, route: APIRelay.authzRoute, status: Int(head.status.code), duration: .zero,
            provider: entry.provider, sessionID: entry.sessionID, requestID: entry.requestID)
        // The state first: writing the end lets the pipeline handler deliver the next request at once.
        state = .discarding
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// A refusal of the one decision, answered here: the problem document, the access-log line; what is left
    /// of the request is dropped. After an upgrade request (the client's decoder reads nothing more) or a
    /// `Connection: close`, the connection ends with the answer.
    private func refuse(
        _ error: GatehouseError, entry: APIRelay.Entry, head: HTTPRequestHead, requestComplete: Bool, route: String = APIRelay.route,
        fields: [(String, String)] = []
    ) {
        guard let context else { return }
        if route == APIRelay.route { relay.metrics.relayedRefusals.increment() }
        relay.accessLog.record(
            method: entry.method, route: route, status: error.status, duration: .zero,
            provider: entry.provider, sessionID: entry.sessionID, requestID: entry.requestID)
        let close = !head.isKeepAlive || head.headers.contains(name: "upgrade")
        let body = Problem.body(error, requestID: entry.requestID)
        var responseHead = relay.problemHead(error, bodyLength: body.readableBytes, close: close, requestID: entry.requestID)
        for (name, value) in fields { responseHead.headers.add(name: name, value: value) }
        // The state first: writing the end lets the pipeline handler deliver the next request at once.
        state = requestComplete && !close ? .idle : .discarding
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        // A HEAD answer has the fields of the GET answer and no body (RFC 9110 §9.3.2).
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// The backend switched protocols: both connections leave HTTP and are joined byte for byte.
    private func tunnel(_ exchange: Exchange) {
        guard let context, let connection = exchange.connection else { return }
        record(exchange)
        self.exchange = nil
        state = .tunnelled
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

    private func upstreamUnreachable(_ error: any Error) {
        relay.metrics.upstreamErrors.increment()
        if let exchange { relay.metrics.upstreamFailed(relay.upstreams.all[exchange.entry.upstream].name) }
        relay.logger.warning("upstream request failed", metadata: ["upstream": "\(exchange.map(redacted) ?? "")", "error": "\(error)"])
        fail(GatehouseError.badGateway("The upstream could not be reached."), closing: !(exchange?.requestComplete ?? true))
    }

    /// Ends the exchange with a problem answer; `closing` when the rest of the request cannot be read.
    private func fail(_ error: GatehouseError, closing: Bool) {
        guard let context else { return }
        let exchange = self.exchange
        let closing = closing || exchange?.clientKeepAlive == false
        self.exchange = nil
        exchange?.connection?.close()
        if exchange?.responseStarted == true {
            state = .discarding
            context.close(promise: nil)
            if let exchange { record(exchange) }
            return
        }
        let requestID = exchange?.entry.requestID ?? RequestIdentifier.make()
        if let exchange {
            exchange.status = error.status
            record(exchange)
        }
        let body = Problem.body(error, requestID: requestID)
        context.write(wrapOutboundOut(.head(relay.problemHead(error, bodyLength: body.readableBytes, close: closing, requestID: requestID))), promise: nil)
        if exchange?.head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        // As in `finish`: the state first, then the end (which may deliver the next request).
        state = closing ? .discarding : .idle
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if closing {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else {
            resumeReading()
        }
    }

    /// The client left: drop the backend connection (it is mid-request).
    private func abandonExchange() {
        guard let exchange else { return }
        self.exchange = nil
        exchange.connection?.close()
        // Logged with the status it got, or nginx's 499 ("client closed request") when it got none.
        if exchange.status == 0 { exchange.status = 499 }
        record(exchange)
    }

    /// The exchange's access-log line and request metrics.
    private func record(_ exchange: Exchange) {
        let entry = exchange.entry
        relay.accessLog.record(
            method: entry.method, route: APIRelay.route, status: exchange.status, duration: ContinuousClock.now - exchange.started,
            provider: entry.provider, sessionID: entry.sessionID, requestID: entry.requestID, upstream: relay.upstreams.all[entry.upstream].name)
    }

    /// The exchange's upstream URL without credentials or query, for log lines.
    private func redacted(_ exchange: Exchange) -> String {
        relay.targets[exchange.entry.upstream]?.redacted ?? relay.upstreams.all[exchange.entry.upstream].name
    }

    private func resumeReading() {
        guard readPending, let context else { return }
        if case .relaying = state, !(exchange?.connection?.isWritable ?? false) { return }
        readPending = false
        context.read()
    }
}
