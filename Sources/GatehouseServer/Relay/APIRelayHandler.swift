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
/// A WebSocket handshake (``APIRelay/Plan/upgrade(_:)``) goes out the same way; after the backend's `101`
/// (only one that completes the handshake, ``WebSocketHandshake``; any other is a 502) both connections leave HTTP and a ``TunnelHandler`` pair carries their bytes until either side closes.
/// Any other answer to a handshake ends the client's connection (its HTTP decoder stops after an upgrade
/// request), as does the router's answer to any upgrade request the relay did not take.
///
/// `HTTPServerPipelineHandler`, in front of this handler, delivers one request at a time, so the relay's
/// answers and the router's never interleave.
///
/// Every decision is ``StateMachine``'s: this handler turns the channel's callbacks, the backend
/// connection's and the timer's into its events and carries out the actions it returns.
final class APIRelayHandler: ChannelDuplexHandler, RemovableChannelHandler, UpstreamReceiver {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart
    typealias Machine = StateMachine<UpstreamConnection>

    let relay: APIRelay
    private let remoteAddress: String?
    /// Set while the handler is in a pipeline (read by the endings in `APIRelayHandler+Endings.swift`).
    private(set) var context: ChannelHandlerContext?
    /// Its rules; the handler and its extensions (`+Endings`) only carry out what it answers.
    var machine: Machine
    /// Where the default upstream's connections come from: the loop's pool of ``primaryRoute``, or the tests'
    /// connections (then ``primaryRoute`` is `nil` and every default route uses them).
    private var primary: (any UpstreamConnectionSource)?
    /// The default route ``primary`` belongs to (kept, so a route of a later table is told apart by identity).
    private var primaryRoute: UpstreamRoute?
    /// Where connections to the other upstreams come from, taken when first needed; each route is kept with its
    /// source, so that its identity cannot be reused by another route while it is here.
    private var sources: [ObjectIdentifier: (route: UpstreamRoute, source: any UpstreamConnectionSource)] = [:]
    var timer: Scheduled<Void>?
    /// The relay wrote an answer that ends the connection (``writeEnd(_:close:)``).
    var closingClient = false
    /// An HTTP/2 stream's: the memo of its connection (on the same loop), in place of the machine's.
    private let streamsMemo: StreamsCredentialMemo?
    /// The decision ``RelayLane`` made for the first request it hands over with the connection, and the connection's
    /// memo after it: the request is decided once, whichever front end serves it.
    var decidedByLane: (plan: APIRelay.Plan, memo: CredentialMemo?)?

    init(relay: APIRelay, remoteAddress: String?, streamsMemo: StreamsCredentialMemo? = nil) {
        self.relay = relay
        self.remoteAddress = remoteAddress
        self.streamsMemo = streamsMemo
        machine = Machine(limits: .init(maxBodyBytes: relay.settings.maxBodyBytes, replayLimitBytes: relay.settings.replayLimitBytes))
    }

    /// A handler whose default upstream's connections come from `connections` (tests hand it connections
    /// that are not sockets).
    init(relay: APIRelay, connections: any UpstreamConnectionSource, remoteAddress: String?) {
        self.relay = relay
        self.primary = connections
        self.remoteAddress = remoteAddress
        self.streamsMemo = nil
        machine = Machine(limits: .init(maxBodyBytes: relay.settings.maxBodyBytes, replayLimitBytes: relay.settings.replayLimitBytes))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Once per connection, on its loop: the default upstream's pool, for the table in force now.
        if primary == nil {
            let fallback = relay.policy.current.upstreams.fallback
            primaryRoute = fallback
            primary = relay.pools.pool(for: fallback, on: context.eventLoop)?.value
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        clientClosed()
        self.context = nil
    }

    // MARK: From the client

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch machine.clientRead(unwrapInboundIn(data)) {
        case .forwardToRouter: context.fireChannelRead(data)
        case .decide(let head, let memo): decide(head, memo: memo, data: data, context: context)
        case .nothing: break
        case .writeUpstream(let connection, let buffer): connection.write(.body(.byteBuffer(buffer)))
        case .endUpstream(let connection):
            connection.write(.end(nil))
            connection.flush()
        case .fail(let failure): fail(failure)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        machine.readComplete()?.flush()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if machine.readRequested() { context.read() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch machine.routerWrites(unwrapOutboundIn(data)) {
        case .write: context.write(data, promise: promise)
        case .replace(let part): context.write(wrapOutboundOut(part), promise: promise)
        case .endAndClose:
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        machine.clientWritabilityChanged()?.setReading(context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client's end of input once the relay closes the connection (a TLS client's `close_notify` answering
        // the gateway's after `Connection: close`): nothing is left to serve, and the router's handlers, which a
        // half-closure would otherwise bring (``RouterHandoff``), are not made for it.
        if closingClient, case ChannelEvent.inputClosed = event { return }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let failure = machine.clientError() else {
            context.fireErrorCaught(error)
            return
        }
        fail(failure)
    }

    // MARK: The decision

    private func decide(_ head: HTTPRequestHead, memo: CredentialMemo?, data: NIOAny, context: ChannelHandlerContext) {
        // `/v1/authz` (when the relay takes it) or `/v1/api`: each with its one decision, carried out alike.
        var memo = streamsMemo.map(\.memo) ?? memo
        defer { streamsMemo?.memo = memo }
        let decision: APIRelay.Plan
        let authz: Bool
        if let decided = decidedByLane {
            decidedByLane = nil
            (decision, authz, memo) = (decided.plan, false, decided.memo)
        } else if head.uri.hasPrefix(ForwardAuthTarget.prefix), let answered = relay.authorize(head, remoteAddress: remoteAddress, memo: &memo) {
            relay.metrics.relayedAuthz.increment()
            (decision, authz) = (answered, true)
        } else {
            (decision, authz) = (relay.decide(head, remoteAddress: remoteAddress, memo: &memo), false)
        }
        switch machine.decided(decision, for: head, memo: memo) {
        case .pass: context.fireChannelRead(data)
        case .start(let acquire): start(acquire)
        case .refuse(let error, let entry, let close): refuse(error, entry: entry, head: head, close: close)
        case .answer(let answer, let entry): self.answer(answer, entry: entry, keepAlive: head.isKeepAlive)
        case .spend(let proof, let decision):
            // Copied only here: the relay is a large value, and the common case needs no copy of it.
            let (relay, remoteAddress) = (relay, remoteAddress)
            relay.spend(proof, then: decision, head, remoteAddress: remoteAddress, on: context.eventLoop)
                .assumeIsolated().whenSuccess { decision in self.resolved(decision) }
        case .resolveAsync:
            let (relay, remoteAddress) = (relay, remoteAddress)
            context.eventLoop.makeFutureWithTask {
                await relay.traced(head) {
                    authz
                        ? await relay.authorizeAsync(head, remoteAddress: remoteAddress) : await relay.decideAsync(head, remoteAddress: remoteAddress)
                }
            }
            .assumeIsolated().whenSuccess { decision in self.resolved(decision) }
        }
    }

    func resolved(_ decision: APIRelay.Plan) {
        guard let context else { return }
        switch machine.resolved(decision) {
        case .nothing: break
        case .start(let acquire, let pending):
            start(acquire)
            for part in pending { carryOut(machine.relayed(part)) }
            machine.readComplete()?.flush()
        case .refuse(let error, let entry, let head, let close):
            refuse(error, entry: entry, head: head, close: close)
            resumeReading()
        case .answer(let answer, let entry, let head):
            self.answer(answer, entry: entry, keepAlive: head.isKeepAlive)
            resumeReading()
        case .pass(let parts):
            for part in parts { context.fireChannelRead(wrapInboundOut(part)) }
            context.fireChannelReadComplete()
            resumeReading()
        }
    }

    /// What a part kept while deciding asks for.
    func carryOut(_ action: Machine.ReadAction) {
        switch action {
        case .writeUpstream(let connection, let buffer): connection.write(.body(.byteBuffer(buffer)))
        case .endUpstream(let connection):
            connection.write(.end(nil))
            connection.flush()
        case .fail(let failure): fail(failure)
        case .forwardToRouter, .decide, .nothing: break
        }
    }

    // MARK: The exchange

    private func start(_ acquire: Machine.Acquire) {
        relay.metrics.proxiedRequests.increment()
        relay.metrics.relayedRequests.increment()
        acquireConnection(acquire)
    }

    /// Where connections to `upstream` come from on this loop.
    func source(of upstream: UpstreamRoute?) -> (any UpstreamConnectionSource)? {
        guard let upstream, upstream !== primaryRoute, !(upstream.isDefault && primaryRoute == nil) else { return primary }
        let key = ObjectIdentifier(upstream)
        if let kept = sources[key] { return kept.source }
        guard let eventLoop = context?.eventLoop, let found = relay.pools.pool(for: upstream, on: eventLoop) else { return nil }
        if upstream.isDefault {
            // `backend` of a table a SIGHUP put in force: its pool is the default one from now on.
            (primaryRoute, primary) = (upstream, found.value)
        } else {
            // Routes of earlier tables are dropped now and then (a connection outlives any number of reloads).
            if sources.count >= 32 { sources.removeAll() }
            sources[key] = (upstream, found.value)
        }
        return found.value
    }

    private func acquireConnection(_ acquire: Machine.Acquire) {
        guard let source = source(of: acquire.upstream) else { return }
        // An idle connection is used at once, without a future (the common case on a busy relay).
        if !acquire.fresh, let idle = source.takeIdle() {
            send(on: idle, for: acquire)
            return
        }
        source.connect().whenComplete { result in
            switch result {
            case .success(let connection): self.send(on: connection, for: acquire)
            case .failure(let error):
                if let failure = self.machine.connectionFailed(for: acquire.id, error) { self.fail(failure) }
            }
        }
    }

    private func send(on connection: UpstreamConnection, for acquire: Machine.Acquire) {
        let timeout = TimeAmount.milliseconds(Int64((acquire.upstream?.timeout ?? relay.settings.upstreamTimeout) * 1000))
        let action = machine.connectionReady(
            connection, for: acquire.id, reused: connection.reused, upstreamWritable: connection.isWritable,
            clientWritable: context?.channel.isWritable ?? true, timeout: timeout, now: context?.eventLoop.now ?? .now())
        switch action {
        case .close(let connection): connection.close()
        case .send(let send):
            connection.handler.receiver = self
            connection.setReading(send.clientWritable)
            connection.write(.head(send.head))
            for part in send.body { connection.write(.body(.byteBuffer(part))) }
            if send.end { connection.write(.end(nil)) }
            connection.flush()
            if let deadline = send.armTimer { armTimer(at: deadline) }
            resumeReading()
        }
    }

    private func armTimer(at deadline: NIODeadline) {
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        timer = nil
        switch machine.timerFired(now: context?.eventLoop.now ?? .now()) {
        case .nothing: break
        case .arm(let deadline): armTimer(at: deadline)
        case .fail(let failure): fail(failure)
        }
    }

    // MARK: From the backend

    func upstreamReceived(_ part: HTTPClientResponsePart) {
        guard let context else { return }
        switch part {
        case .head(let head):
            switch machine.upstreamHead(head) {
            case .nothing: break
            case .informational(let head):
                context.write(wrapOutboundOut(.head(APIRelay.clientHead(of: head))), promise: nil)
            case .switching(let head, let requestID):
                var clientHead = APIRelay.clientHead(of: head)
                clientHead.headers.add(name: "X-Request-Id", value: requestID)
                context.write(wrapOutboundOut(.head(clientHead)), promise: nil)
            case .final(let head, let requestID, let close, let upstream, let started):
                relay.metrics.upstream(APIRelay.label(upstream), duration: ContinuousClock.now - started)
                var clientHead = APIRelay.clientHead(of: head)
                clientHead.headers.add(name: "X-Request-Id", value: requestID)
                if close { clientHead.headers.add(name: "Connection", value: "close") }
                context.write(wrapOutboundOut(.head(clientHead)), promise: nil)
            case .fail(let failure): fail(failure)
            }
        case .body(let buffer):
            if machine.upstreamBody() { context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil) }
        case .end:
            switch machine.upstreamEnd() {
            case .nothing: break
            case .finish(let connection, let reuse, let record, let closeClient):
                finish(connection, reuse: reuse, record: record, closeClient: closeClient, context: context)
            case .tunnel(let connection, let record):
                self.record(record)
                tunnel(connection, context: context)
            }
        }
    }

    func upstreamReadComplete() {
        guard let context else { return }
        guard machine.upstreamReadComplete() else { return }
        context.flush()
        machine.clientFlushed(clientWritable: context.channel.isWritable)?.setReading(false)
    }

    func upstreamWritabilityChanged(_ isWritable: Bool) {
        if machine.upstreamWritabilityChanged(isWritable) { context?.read() }
    }

    func upstreamFailed(_ error: any Error) {
        switch machine.upstreamFailed(error) {
        case .nothing: break
        case .abandon(let connection):
            connection.close()
            context?.close(promise: nil)
        case .retry(let connection, let acquire):
            connection.close()
            acquireConnection(acquire)
        case .fail(let failure): fail(failure)
        }
    }
}
