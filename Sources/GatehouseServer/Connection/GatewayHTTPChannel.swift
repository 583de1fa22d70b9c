import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The gateway's HTTP/1.1 connection: one listener, two front ends. Hummingbird's `HTTP1Channel` with one
/// handler more: ``APIRelayHandler`` sees every request first and relays the `/v1/api/…` calls it can serve
/// from memory on the connection's own event loop; every other request goes on, unchanged, to the router.
///
/// Pipeline: ``RelayLane`` (the relay's simple requests as bytes, until the first that is not) → ``RequestLineWatcher`` → HTTP/1.1 decoder (→ the watcher's boundaries) and encoder →
/// ``ReadInterestKeeper`` → `HTTPServerPipelineHandler` (one request at a time, so the relay's answers and the
/// router's keep the order of the requests) → ``HTTP1ConnectionGuard`` (idle, header and body timeouts; the
/// target's authority is the host) → ``APIRelayHandler`` (NIOHTTP1 parts)
/// → ``RouterHandoff``, which adds the HTTP types codec → ``MalformedRequestHandler`` → Hummingbird's connection
/// state → the router's async channel only when a request (or a parse error, or the client's half-closure) reaches
/// it: a connection whose requests the relay answers alone costs no router handlers, no async channel and no task.
/// With the relay, a connection starts with the lane, the guard and the router's hand-off alone; the lane adds the
/// rest when it hands the connection over, so a connection whose requests the lane serves alone (a client that
/// opens a connection per request, with a TLS handshake each) makes none of NIOHTTP1's handlers.
/// ``GatewayListener`` sets each connection up and serves it on the event loop that accepted it
/// (``serve(channel:logger:)``).
struct GatewayHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    /// The channel Hummingbird's loop serves: the connection (or HTTP/2 stream) once the router is needed.
    typealias RouterChannel = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    /// A connection: its router channel when the router is needed, `nil` when it ends without.
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let router: EventLoopFuture<RouterChannel?>
    }

    let responder: HTTPChannelHandler.Responder
    /// `nil`: every request goes to the router.
    let relay: APIRelay?
    /// Timeouts and bounds per client (``HTTP1ConnectionGuard``, ``HTTP2StreamCodec``,
    /// ``ClientConnectionLimiter``, ``RequestLineWatcher``).
    let client: ClientLimits
    /// Behind TLS (``GatewayTLSChannel``): requests are `https`.
    var secure = false
    /// `tls.hsts_seconds`: above 0, every answer carries `Strict-Transport-Security`.
    var hstsSeconds = 0

    /// Sets a connection up and serves it, on its event loop (``GatewayListener``): the router's task starts only
    /// when a request reaches the router.
    func serve(channel: any Channel, logger: Logger) throws {
        serve(try configure(channel: channel, logger: logger), logger: logger)
    }

    /// The connection's handlers, added now on its event loop: also what a TLS connection that chose HTTP/1.1 runs
    /// the moment its handshake completes (``TLSProtocolSwitch``).
    func configure(channel: any Channel, logger: Logger) throws -> Value {
        let pipeline = channel.pipeline.syncOperations
        if let limiter = client.connections, !secure { try pipeline.addHandler(ClientConnectionLimiter.Handler(limiter: limiter)) }
        let watcher = RequestLineWatcher(maxURLBytes: client.maxURLBytes)
        // One handler for the connection's own guards: each request crosses one handler, not one per guard.
        let connectionGuard = HTTP1ConnectionGuard(idleTimeout: client.idleTimeout, bodyTimeout: client.bodyTimeout, sendTimeout: client.sendTimeout)
        try pipeline.addHandler(connectionGuard)
        let router = channel.eventLoop.makePromise(of: RouterChannel?.self)
        try pipeline.addHandler(
            RouterHandoff(
                triggers: .requestsErrorsAndHalfClosure,
                deliver: { routerChannel in
                    router.succeed(routerChannel)
                    return true
                }
            ) { pipeline in
                try addRouterHandlers(to: pipeline, malformed: MalformedRequestHandler(requestLine: watcher), logger: logger)
                return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            })
        let remoteAddress = channel.remoteAddress
        if let relay {
            // In front of the guard (behind TLS): the lane serves the simple requests as bytes until the first that is
            // not, and only then adds the HTTP handlers around the guard and hands the connection to them. A
            // connection whose requests the lane serves alone (a new connection per request among them) never makes
            // them: the guard's idle and send clocks are all it needs meanwhile.
            let lane = RelayLane(
                relay: relay, connectionGuard: connectionGuard, remoteAddress: remoteAddress?.ipAddress, hstsSeconds: hstsSeconds
            ) { pipeline in
                try addHTTPHandlers(to: pipeline, around: connectionGuard, watcher: watcher, remoteAddress: remoteAddress)
            }
            try pipeline.addHandler(lane, position: .before(connectionGuard))
        } else {
            try addHTTPHandlers(to: pipeline, around: connectionGuard, watcher: watcher, remoteAddress: remoteAddress)
        }
        return Value(channel: channel, router: router.futureResult)
    }

    /// The HTTP/1.1 handlers around the connection's guard: in front of it the request line's watcher, NIOHTTP1's
    /// codec (and its boundaries for the watcher), the read-interest keeper and NIO's pipelining handler; behind
    /// it HSTS and the relay's handler, which it returns (`nil` without a relay).
    @discardableResult
    private func addHTTPHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, around connectionGuard: HTTP1ConnectionGuard, watcher: RequestLineWatcher,
        remoteAddress: SocketAddress?
    ) throws -> APIRelayHandler? {
        // Hummingbird's defaults: 80 KiB of head at most.
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = 80 * 1024
        limits.maxHeaderListSize = 80 * 1024
        limits.maxHeaderFieldCount = 1000
        try pipeline.configureHTTPServerPipeline(
            position: .before(connectionGuard), withPipeliningAssistance: true, withErrorHandling: false, withOutboundHeaderValidation: false,
            withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
        let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        // In front of the HTTP handlers, and behind TLS (``GatewayTLSChannel``): it counts the plain bytes, and
        // a WebSocket tunnel joins the pipeline right in front of it (``APIRelayHandler``).
        try pipeline.addHandler(watcher, position: .before(try pipeline.handler(type: HTTPResponseEncoder.self)))
        try pipeline.addHandler(RequestLineWatcher.Boundaries(watcher), position: .after(decoder))
        try pipeline.addHandler(ReadInterestKeeper(), position: .before(try pipeline.handler(type: HTTPServerPipelineHandler.self)))
        return try addRelayHandlers(to: pipeline, position: .after(connectionGuard), remoteAddress: remoteAddress)
    }

    /// HSTS and the relay: what every request crosses first, on an HTTP/1.1 connection and on each HTTP/2 stream
    /// alike (``GatewayHTTP2StreamChannel``, whose streams share their connection's `streamsMemo`).
    @discardableResult
    func addRelayHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations, position: ChannelPipeline.SynchronousOperations.Position = .last,
        remoteAddress: SocketAddress?, streamsMemo: StreamsCredentialMemo? = nil
    ) throws -> APIRelayHandler? {
        var position = position
        if hstsSeconds > 0 {
            let hsts = StrictTransportSecurityHandler(maxAge: hstsSeconds)
            try pipeline.addHandler(hsts, position: position)
            position = .after(hsts)
        }
        guard let relay else { return nil }
        let handler = APIRelayHandler(relay: relay, remoteAddress: remoteAddress?.ipAddress, streamsMemo: streamsMemo)
        try pipeline.addHandler(handler, position: position)
        return handler
    }

    /// What a request the relay passes on crosses to reach the router: the HTTP types codec, Hummingbird's state.
    func addRouterHandlers(to pipeline: ChannelPipeline.SynchronousOperations, malformed: MalformedRequestHandler?, logger: Logger) throws {
        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: secure))
        if let malformed { try pipeline.addHandler(malformed) }
        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
    }

    // `ServerChildChannel`, which `HTTPChannelHandler` (the router's request loop, ``serveRouter(_:logger:)``)
    // requires: what Hummingbird's own server would call. The gateway's listener calls ``serve(channel:logger:)``.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture { try configure(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        serve(value, logger: logger)
    }

    /// Starts the router's task when a request reaches the router; none when the relay answers every request. Also
    /// what a TLS connection that chose HTTP/1.1 runs (``GatewayTLSChannel``).
    func serve(_ value: Value, logger: Logger) {
        let http1 = self
        value.router.whenSuccess { router in
            // `nil`: the connection ended, the relay answered every request.
            if let router { http1.serveRouter(router, logger: logger) }
        }
    }

    /// Serves the router's requests of a connection (or stream) in a task of its own: it ends with the connection,
    /// which the graceful shutdown waits for (``GatewayListener``).
    func serveRouter(_ router: RouterChannel, logger: Logger) {
        Task { await handleHTTP(asyncChannel: router, logger: logger) }
    }
}
