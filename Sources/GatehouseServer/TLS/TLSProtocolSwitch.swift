import NIOCore
import NIOTLS

/// Builds a TLS connection's protocol pipeline the moment its handshake completes, by ALPN's choice, and then
/// leaves the pipeline; until then it holds the handshake timeout (a client that never completes its handshake
/// is not kept past the idle limit of a connection).
///
/// In place of NIO's `NIOTypedApplicationProtocolNegotiationHandler`, which is made for a set-up that completes
/// later: it buffers the reads behind it and completes through a future hop, on every new connection. Here the
/// set-up is synchronous (``GatewayTLSChannel`` adds the HTTP/1.1 or HTTP/2 handlers in the same call), so the
/// reads NIOSSL passes on after the handshake already find their handlers, and nothing is buffered.
final class TLSProtocolSwitch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    typealias InboundOut = Any
    typealias Negotiated = GatewayTLSChannel.Negotiated

    /// Adds the pipeline of the negotiated protocol; throws to refuse it (the connection is then closed).
    typealias Configure = (ALPNResult, any Channel) throws -> Negotiated

    private let configure: Configure
    private let handshakeTimeout: TimeAmount
    private var timeout: Scheduled<Void>?
    private var promise: EventLoopPromise<Negotiated>?

    /// What the pipeline became; fails when the connection ends first or the protocol is refused.
    let negotiated: EventLoopFuture<Negotiated>

    init(on eventLoop: any EventLoop, handshakeTimeout: TimeAmount, configure: @escaping Configure) {
        let promise = eventLoop.makePromise(of: Negotiated.self)
        self.promise = promise
        self.negotiated = promise.futureResult
        self.handshakeTimeout = handshakeTimeout
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(in: handshakeTimeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.inappropriateOperationForState))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .handshakeCompleted(let negotiatedProtocol) = event as? TLSUserEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        do {
            let result = try configure(negotiatedProtocol.map(ALPNResult.negotiated) ?? .fallback, context.channel)
            finish(.success(result))
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        } catch {
            finish(.failure(error))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(ChannelError.outputClosed))
        context.fireChannelInactive()
    }

    /// Completes the promise once and ends the timeout, whichever comes first.
    private func finish(_ result: Result<Negotiated, any Error>) {
        timeout?.cancel()
        timeout = nil
        guard let promise else { return }
        self.promise = nil
        promise.completeWith(result)
    }
}
