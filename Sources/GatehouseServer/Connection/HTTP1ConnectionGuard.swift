import Foundation
import GatehouseCore
import NIOCore
import NIOHTTP1

/// The HTTP/1.1 connection's own guards, in one handler so that each request crosses one handler for all of
/// them (it sits right behind NIO's HTTP server pipeline handler, which hands over one request at a time):
///
/// - **Idle and header timeout** (`limits.client_idle_timeout_seconds`): closes a connection that has had no
///   complete request head for the timeout: one idle between requests (nginx's `keepalive_timeout`), and one
///   sending its head too slowly or not at all (`client_header_timeout`, the slowloris defence). A trickle of
///   bytes does not reset it: only a whole head does. While a request is in flight (relayed or routed) it does
///   nothing: upstream patience is the relay's and the router's (`upstream_timeout_seconds`). After a `101` the
///   connection is a tunnel and it stops for good.
/// - **Body timeout** (`limits.client_body_timeout_seconds`, ``ClientBodyClock``): a request whose body makes
///   no progress is answered `408` (when no answer has started) and the connection closes.
/// - **Send timeout** (`limits.client_send_timeout_seconds`, ``ClientSendClock``): a client that takes none of its
///   answer for the timeout is closed, in the middle of the answer or of a tunnel.
/// - **Absolute form**: a request in absolute form (`GET https://admin.test/v1/api/x HTTP/1.1`) becomes the
///   origin form every handler behind reads (`/v1/api/x`, `Host: admin.test`): the target's authority is the
///   request's host (RFC 9112 §3.2.2), so per-host rules, `/v1/authz` and the forwarded head judge the host the
///   client named, not a `Host` field it set beside it. A `Host` that disagrees with the target's authority, an
///   authority with user information, or a scheme other than `http`/`https` is answered `400 invalid_request`,
///   and the connection closed (what follows on it cannot be trusted to be framed as the client meant). An
///   HTTP/2 stream's authority is checked by ``HTTP2StreamCodec``.
final class HTTP1ConnectionGuard: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    // Idle and header timeout.
    private var inFlight = 0
    private var upgraded = false
    /// Idle means no request in flight.
    private var idle: IdleClock
    private var idleTimer: Scheduled<Void>?

    // Body timeout.
    private var body: ClientBodyClock
    private var responseStarted = false
    /// The request was cut: what the handlers behind still read, write or report is dropped (the decoder's
    /// error at the close, an answer the relay or the router would start on a connection that is done).
    private var expired = false
    private var bodyTimer: Scheduled<Void>?

    // Send timeout.
    private var send: ClientSendClock

    // Absolute form.
    /// The rest of a refused request is dropped; the connection closes after the answer.
    private var refused = false

    init(idleTimeout: TimeAmount, bodyTimeout: TimeAmount, sendTimeout: TimeAmount) {
        idle = IdleClock(timeout: idleTimeout)
        body = ClientBodyClock(timeout: bodyTimeout)
        send = ClientSendClock(timeout: sendTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startIdle(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startIdle(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if expired { return }
        let part = unwrapInboundIn(data)
        body.read(part)
        guard case .head(let head) = part else {
            if !refused { context.fireChannelRead(data) }
            return
        }
        inFlight += 1
        if refused { return }
        // Origin form, the usual case, costs one byte's look.
        guard let first = head.uri.utf8.first, first != UInt8(ascii: "/"), head.method != .CONNECT, head.uri != "*" else {
            context.fireChannelRead(data)
            return
        }
        adaptAbsoluteForm(head, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if bodyTimer == nil, let deadline = body.deadline(afterReadAt: context.eventLoop.now) { scheduleBody(context, at: deadline) }
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        send.writabilityChanged(context)
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        body.asked(at: context.eventLoop.now)
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if expired {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status == .switchingProtocols:
            upgraded = true
            stopIdle()
        case .head(let head) where head.status.code >= 200:
            responseStarted = true
        case .end:
            responseStarted = false
            inFlight = max(0, inFlight - 1)
            if inFlight == 0 { idle.idle() }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !expired { context.fireErrorCaught(error) }
    }

    // MARK: The lane

    /// ``RelayLane``, in front of the HTTP handlers, serves a request this handler does not see: it is in flight
    /// for the idle clock as any other.
    func laneRequestBegan() {
        inFlight += 1
    }

    /// The answer to a request of ``laneRequestBegan()`` is out.
    func laneAnswerEnded() {
        inFlight = max(0, inFlight - 1)
        if inFlight == 0 { idle.idle() }
    }

    private func stop() {
        stopIdle()
        bodyTimer?.cancel()
        bodyTimer = nil
        send.stop()
    }

    // MARK: Idle and header timeout

    private func startIdle(_ context: ChannelHandlerContext) {
        idle.idle()
        scheduleIdle(context, at: idle.deadline)
    }

    private func scheduleIdle(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        guard !upgraded, idleTimer == nil else { return }
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            guard !upgraded else { return }
            switch idle.verdict(busy: inFlight > 0, at: .now()) {
            case .close: context.close(promise: nil)
            case .later(let deadline): scheduleIdle(context, at: deadline)
            }
        }
    }

    private func stopIdle() {
        idleTimer?.cancel()
        idleTimer = nil
    }

    // MARK: Body timeout

    private func scheduleBody(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        bodyTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            bodyTimer = nil
            switch body.verdict(at: context.eventLoop.now) {
            case .done:
                break
            case .later(let deadline):
                scheduleBody(context, at: deadline)
            case .expired:
                expired = true
                expireBody(context)
            }
        }
    }

    private func expireBody(_ context: ChannelHandlerContext) {
        guard !responseStarted else {
            context.close(promise: nil)
            return
        }
        let seconds = body.timeout.nanoseconds / 1_000_000_000
        answerAndClose(
            GatehouseError(code: .requestTimeout, status: 408, detail: "The request body made no progress for \(seconds) seconds."), context: context)
    }

    // MARK: Absolute form

    /// A head whose target is not origin form: turned into it, or refused.
    private func adaptAbsoluteForm(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let (authority, target) = Self.originForm(of: head.uri) else {
            refuse("The request target is neither an absolute path nor an absolute http(s) URI.", context: context)
            return
        }
        let lowered = authority.lowercased()
        guard head.headers["host"].allSatisfy({ $0.lowercased() == lowered }) else {
            refuse("The request's Host field names another host than its target.", context: context)
            return
        }
        var head = head
        head.uri = target
        head.headers.replaceOrAdd(name: "Host", value: authority)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// The authority and the origin-form target of an absolute `http`/`https` URI; `nil` for anything else.
    static func originForm(of uri: String) -> (authority: String, target: String)? {
        guard let separator = uri.range(of: "://") else { return nil }
        let scheme = uri[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = uri[separator.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<end]
        guard !authority.isEmpty, !authority.contains("@"), !authority.contains(where: { $0 == " " || $0 == "\\" }) else { return nil }
        var target = String(rest[end...])
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if target.isEmpty || target.first == "?" { target = "/" + target }
        return (String(authority), target)
    }

    private func refuse(_ detail: String, context: ChannelHandlerContext) {
        refused = true
        answerAndClose(.invalidRequest(detail), context: context)
    }

    // MARK: Own answers

    /// ``Problem/answerAndClose(_:context:)``, and the request counted as answered: the answer is written in
    /// front of this handler, so its `end` does not pass ``write(context:data:promise:)``. The idle clock then
    /// runs as after any answer (a client that does not read the answer is closed after the idle timeout).
    private func answerAndClose(_ error: GatehouseError, context: ChannelHandlerContext) {
        Problem.answerAndClose(error, context: context)
        responseStarted = false
        inFlight = max(0, inFlight - 1)
        if inFlight == 0 { idle.idle() }
    }
}
