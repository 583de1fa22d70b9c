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
/// Pipeline: HTTP/1.1 decoder and encoder → `HTTPServerPipelineHandler` (one request at a time, so the
/// relay's answers and the router's keep the order of the requests) → ``APIRelayHandler`` (NIOHTTP1 parts)
/// → HTTP types codec → ``MalformedRequestHandler`` → Hummingbird's connection state → the router.
struct GatewayHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    /// `nil`: every request goes to the router.
    let relay: APIRelay?
    /// See ``ClientIdleTimeoutHandler``.
    let clientIdleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Hummingbird's defaults: 80 KiB of head at most.
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldSize = 80 * 1024
            limits.maxHeaderListSize = 80 * 1024
            limits.maxHeaderFieldCount = 1000
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: true, withErrorHandling: false, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
            try pipeline.addHandler(ClientIdleTimeoutHandler(timeout: clientIdleTimeout))
            if let relay {
                try pipeline.addHandler(APIRelayHandler(relay: relay, pool: relay.pools.pool(for: channel.eventLoop), remoteAddress: channel.remoteAddress?.ipAddress))
            }
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(MalformedRequestHandler())
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// The gateway's HTTP/1.1 server: ``GatewayHTTPChannel``.
    static func gateway(relay: APIRelay?, clientIdleTimeout: TimeAmount) -> HTTPServerBuilder {
        .init { responder in GatewayHTTPChannel(responder: responder, relay: relay, clientIdleTimeout: clientIdleTimeout) }
    }
}
