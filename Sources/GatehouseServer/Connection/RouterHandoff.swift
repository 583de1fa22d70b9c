import NIOCore
import NIOHTTP1

/// The last handler of a connection (``GatewayHTTPChannel``) or of an HTTP/2 stream (``GatewayHTTP2StreamChannel``)
/// until something reaches it that the router must see: a request part, which happens only when the relay passes
/// the request on; on a connection also a parse error (the router's handlers answer it with a problem document,
/// ``MalformedRequestHandler``) and the client's half-closure (Hummingbird's loop ends the connection then; the
/// relay keeps a TLS client's `close_notify` after an answer that ends the connection to itself,
/// ``APIRelayHandler``). Then, and only then, it adds the
/// router's handlers behind itself, wraps the channel in an async channel, hands that on to be served by
/// Hummingbird's loop, and passes the event on: a connection or stream the relay answers alone costs no router
/// handlers, no async channel and no task more than it needs.
final class RouterHandoff: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias Install = (ChannelPipeline.SynchronousOperations) throws -> GatewayHTTPChannel.RouterChannel
    /// Receives the router's channel once it is made, or `nil` once the channel ends without one; returns false
    /// when nobody will serve it (the connection is ending).
    typealias Deliver = (GatewayHTTPChannel.RouterChannel?) -> Bool

    /// What else than a request part makes the router's handlers: on an HTTP/1.1 connection, a parse error and
    /// the client's half-closure; on an HTTP/2 stream nothing (the stream's codec turns its ends into parts).
    enum Triggers {
        case requests
        case requestsErrorsAndHalfClosure
    }

    private let triggers: Triggers
    private let deliver: Deliver
    /// Adds the router's handlers and the async channel; nil once done (or the channel ended first).
    private var install: Install?

    init(triggers: Triggers, deliver: @escaping Deliver, install: @escaping Install) {
        self.triggers = triggers
        self.deliver = deliver
        self.install = install
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard handOff(context) else { return }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Only the parser's: the others (a reset, a TLS peer gone without `close_notify`) end the connection anyway.
        if triggers == .requestsErrorsAndHalfClosure, error is HTTPParserError, !handOff(context) { return }
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client's half-closure: Hummingbird's loop ends the connection once what is under way is answered.
        if triggers == .requestsErrorsAndHalfClosure, case ChannelEvent.inputClosed = event, !handOff(context) { return }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        unused()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        unused()
    }

    /// Makes the router's handlers the first time; false when the channel is being closed instead.
    private func handOff(_ context: ChannelHandlerContext) -> Bool {
        guard let install else { return true }
        self.install = nil
        do {
            guard deliver(try install(context.pipeline.syncOperations)) else {
                context.close(promise: nil)
                return false
            }
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return false
        }
        return true
    }

    /// The channel ended with no request for the router.
    private func unused() {
        guard install != nil else { return }
        install = nil
        _ = deliver(nil)
    }
}
