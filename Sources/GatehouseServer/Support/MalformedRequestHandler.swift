import GatehouseCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request the HTTP parser cannot read with a problem document, instead of the bare
/// `400` with an empty body that the server would write: `431 headers_too_large` when the head is larger
/// than the parser takes (80 KiB; smaller excesses reach `RequestHeadMiddleware`), `414 uri_too_long` when
/// that is for a request line over the URL limit (``RequestLineWatcher``), `400 invalid_request`
/// for anything else. Then it closes the connection: after a parse error nothing more can be read from it.
///
/// Only before a request has started and while no response is under way: an error in the middle of a
/// body (a malformed chunk) goes on to the request that is reading it.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var requestInProgress = false
    private var responseInProgress = false
    /// Whether the request the decoder gave up on has an overlong request line (then 414, not 431).
    private let requestLine: RequestLineWatcher?

    init(requestLine: RequestLineWatcher? = nil) {
        self.requestLine = requestLine
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: requestInProgress = true
        case .end: requestInProgress = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200: responseInProgress = true
        case .end: responseInProgress = false
        default: break
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, !requestInProgress, !responseInProgress else {
            context.fireErrorCaught(error)
            return
        }
        let problem =
            switch parserError {
            case .headerOverflow where requestLine?.overlongRequestLine == true:
                GatehouseError(code: .uriTooLong, status: 414, detail: "The request target exceeds \(requestLine?.maxURLBytes ?? 0) bytes.")
            case .headerOverflow: GatehouseError(code: .headersTooLarge, status: 431, detail: "The request head exceeds 80 KiB.")
            default: GatehouseError.invalidRequest("The request is not valid HTTP/1.1.")
            }
        let body = Problem.body(problem)
        var headers = Problem.headers(problem)
        headers[.contentLength] = String(body.readableBytes)
        headers[.connection] = "close"
        let status = HTTPResponse.Status(code: problem.status)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
