import GatehouseCore
import HTTPTypes
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// The one front-end handler of an HTTP/2 stream: turns the stream's frames into the HTTP/1.1 request parts the
/// relay and the router read, and their answer back into frames; refuses a target they could misread; and cuts a
/// request body that makes no progress. One handler where there were four (NIOHTTP2's
/// `HTTP2FramePayloadToHTTP1ServerCodec` and three of the gateway's), because every handler a frame or part passes
/// costs a hop on every stream (measured: one handler less, about 5 % of an HTTP/2 request's CPU).
///
/// Inbound, the header block has already been validated by `NIOHTTP2Handler` (RFC 9113 §8.2-8.3: the pseudo-fields
/// present once each, no connection-specific field, no CR, LF or NUL in a value).
/// - **Target.** `400 invalid_request` for a `host` that names another authority than `:authority` (RFC 9113
///   §8.3.1 calls it malformed) or a `:path` that is not origin-form (`*` only for `OPTIONS`). Once this passes,
///   the `Host` every handler reads is the authority the client's target named.
/// - **Head.** Version 1.1 (a stream is one request: keep-alive is the stream's business, not the relay's),
///   `:authority` as `host`, the `cookie` fields HTTP/2 may split joined with `; ` (RFC 9113 §8.2.3).
/// - **Framing.** The head always says how its body is framed, because an HTTP/1.1 head that says nothing has no
///   body, and bytes written upstream after such a head are a second request to the backend (request smuggling).
///   With `content-length`: as it is. With the stream's end in the HEADERS frame: no body (`content-length: 0` for
///   a method whose requests have one). Otherwise `transfer-encoding: chunked`, except for `GET`, `HEAD`, `DELETE`,
///   `CONNECT` and `TRACE`, whose head is held until the stream's next part says which it is: its end (no body: the
///   head as it is) or DATA (chunked).
/// - **Body timeout.** `limits.client_body_timeout_seconds` (``ClientBodyClock``, from the moment the head
///   arrives, held or not): a body that makes no progress resets the stream (`RST_STREAM`, which closing a stream
///   channel sends). An HTTP/1.1 connection has the same clock in ``HTTP1ConnectionGuard``, which answers `408`.
/// - **Send timeout.** `limits.client_send_timeout_seconds` (``ClientSendClock``): a stream whose client takes none
///   of its answer for the timeout (its window stays closed) is reset; the connection's other streams go on.
///
/// Outbound: the answer's head as HEADERS (`:status`, names in lower case, without the connection-specific fields
/// RFC 9113 §8.2.2 forbids), its body as DATA, its end as END_STREAM: on the last frame when the end follows it
/// before a flush (the usual answer: HEADERS, one DATA with END_STREAM), else on trailers or an empty DATA frame.
/// The answer to a HEAD, a 204 and a 304 has no DATA: a body written for it (the router writes a HEAD's as for GET)
/// is dropped, as RFC 9110 §9.3.2 and NIOHTTP2's content-length check want. Fields whose value is
/// new with nearly every answer are not added to the connection's HPACK table, so it keeps the ones that repeat;
/// `set-cookie` is never indexed (RFC 7541 §7.1.3).
final class HTTP2StreamCodec: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum Inbound {
        /// No HEADERS yet.
        case awaitingHead
        /// A head without framing, until the stream's next part.
        case held(HTTPRequestHead)
        /// The head has gone on; DATA and trailers follow.
        case body
        /// Answered here (`400`), or cut by the body timeout: nothing more of the stream goes on.
        case done
    }

    private var inbound = Inbound.awaitingHead
    private var clock: ClientBodyClock
    private var timer: Scheduled<Void>?
    private var send: ClientSendClock
    /// The answer's last HEADERS or DATA frame, held until the next write or flush: an end that follows at once
    /// rides on it as END_STREAM, instead of an empty DATA frame of its own through NIOHTTP2.
    private var held: (frame: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?)?
    /// The request is a HEAD.
    private var headRequest = false
    /// The final answer has no body (a HEAD's, a 204 or a 304): body parts written for it are dropped.
    private var bodiless = false
    /// The body timeout cut the request: what the handlers behind still write or report is dropped (an error at
    /// the close, an answer the relay or the router would start on a stream that is done).
    private var expired = false

    init(bodyTimeout: TimeAmount, sendTimeout: TimeAmount) {
        clock = ClientBodyClock(timeout: bodyTimeout)
        send = ClientSendClock(timeout: sendTimeout)
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            switch inbound {
            case .awaitingHead: receiveHead(headers, context: context)
            case .held(let head):
                // Trailers straight after the head: no body.
                inbound = .body
                deliver(.head(head), context: context)
                deliver(.end(Self.trailers(headers.headers)), context: context)
            case .body: deliver(.end(Self.trailers(headers.headers)), context: context)
            case .done: break
            }
        case .data(let data):
            guard case .byteBuffer(let bytes) = data.data else { return }  // NIOHTTP2 reads buffers
            switch inbound {
            case .awaitingHead, .done: return
            case .held(var head):
                inbound = .body
                if bytes.readableBytes > 0 || !data.endStream {
                    head.headers.add(name: "transfer-encoding", value: "chunked")
                }
                deliver(.head(head), context: context)
            case .body: break
            }
            if bytes.readableBytes > 0 { deliver(.body(bytes), context: context) }
            if data.endStream { deliver(.end(nil), context: context) }
        default:
            // Flow control, priority and resets are the stream channel's and NIOHTTP2's business.
            break
        }
    }

    private func receiveHead(_ frame: HTTP2Frame.FramePayload.Headers, context: ChannelHandlerContext) {
        if let detail = Self.problem(with: frame.headers) {
            refuse(GatehouseError.invalidRequest(detail), context: context)
            return
        }
        let head: HTTPRequestHead
        let framed: Bool
        do {
            (head, framed) = try Self.requestHead(frame.headers, endStream: frame.endStream)
        } catch {
            inbound = .done
            context.fireErrorCaught(error)
            return
        }
        headRequest = head.method == .HEAD
        // The body's clock starts with the head, whether it goes on now or is held.
        clock.read(.head(head))
        if frame.endStream {
            inbound = .body
            deliver(.head(head), context: context)
            deliver(.end(nil), context: context)
        } else if framed {
            inbound = .body
            deliver(.head(head), context: context)
        } else {
            inbound = .held(head)
        }
    }

    private func deliver(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if case .head = part {} else { clock.read(part) }
        context.fireChannelRead(wrapInboundOut(part))
    }

    /// Answers `400` with the problem document here: the handlers behind never see the request.
    private func refuse(_ error: GatehouseError, context: ChannelHandlerContext) {
        inbound = .done
        let body = Problem.body(error)
        var fields = HPACKHeaders([(":status", "400")])
        for field in Problem.headers(error) { fields.add(name: field.name.canonicalName, value: field.value) }
        fields.add(name: "content-length", value: String(body.readableBytes))
        context.write(wrapOutboundOut(.headers(.init(headers: fields))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if timer == nil, let deadline = clock.deadline(afterReadAt: context.eventLoop.now) { schedule(context, at: deadline) }
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        send.writabilityChanged(context)
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        clock.asked(at: context.eventLoop.now)
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !expired { context.fireErrorCaught(error) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopClock()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopClock()
        held?.promise?.fail(ChannelError.ioOnClosedChannel)
        held = nil
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if expired {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(let head):
            releaseHeld(context)
            let status = head.status.code
            if status >= 200 { bodiless = headRequest || status == 204 || status == 304 }
            held = (.headers(.init(headers: Self.fields(status: status, head.headers))), promise)
        case .body(let body):
            if bodiless {
                // The router writes a HEAD answer's body as for GET; HTTP/2 carries none (NIOHTTP2 refuses it).
                promise?.succeed()
                return
            }
            releaseHeld(context)
            held = (.data(.init(data: body)), promise)
        case .end(let trailers?):
            releaseHeld(context)
            context.write(wrapOutboundOut(.headers(.init(headers: Self.fields(status: nil, trailers), endStream: true))), promise: promise)
        case .end(nil):
            guard let (frame, framePromise) = held else {
                context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true))), promise: promise)
                return
            }
            held = nil
            let last: HTTP2Frame.FramePayload
            switch frame {
            case .headers(var headers):
                headers.endStream = true
                last = .headers(headers)
            case .data(var data):
                data.endStream = true
                last = .data(data)
            default:
                last = frame
            }
            let done: EventLoopPromise<Void>?
            switch (framePromise, promise) {
            case (let only, nil), (nil, let only): done = only
            case (let first?, let second?):
                first.futureResult.cascade(to: second)
                done = first
            }
            context.write(wrapOutboundOut(last), promise: done)
        }
    }

    func flush(context: ChannelHandlerContext) {
        releaseHeld(context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        releaseHeld(context)
        context.close(mode: mode, promise: promise)
    }

    /// Writes the held frame as it is: what follows is not the answer's end, or the answer is flushed.
    private func releaseHeld(_ context: ChannelHandlerContext) {
        guard let (frame, promise) = held else { return }
        held = nil
        context.write(wrapOutboundOut(frame), promise: promise)
    }

    // MARK: Body timeout

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            switch clock.verdict(at: context.eventLoop.now) {
            case .done:
                break
            case .later(let deadline):
                schedule(context, at: deadline)
            case .expired:
                expired = true
                inbound = .done
                context.close(promise: nil)
            }
        }
    }

    private func stopClock() {
        timer?.cancel()
        timer = nil
        send.stop()
    }

    // MARK: Conversions

    /// What is wrong with a request head's target, if anything.
    static func problem(with fields: HPACKHeaders) -> String? {
        if let path = fields.first(name: ":path") {
            let asterisk = path == "*" && fields.first(name: ":method") == "OPTIONS"
            guard path.utf8.first == UInt8(ascii: "/") || asterisk else {
                return "The request's :path must be an absolute path (origin-form)."
            }
        }
        if let authority = fields.first(name: ":authority")?.lowercased() {
            // Both are rare together (clients send one or the other), so the lower-casing costs nothing usual.
            for host in fields.values(forHeader: "host", canonicalForm: false) where host.lowercased() != authority {
                return "The request's Host field names another host than its :authority."
            }
        }
        return nil
    }

    /// The HTTP/1.1 head of a validated request header block, framed if the block says enough, and whether it says
    /// how its body is framed (NIOHTTP2 has refused `transfer-encoding`: only `content-length` or the one added here).
    static func requestHead(_ block: HPACKHeaders, endStream: Bool) throws -> (head: HTTPRequestHead, framed: Bool) {
        var method: String?
        var path: String?
        var authority: String?
        var fields: [(String, String)] = []
        fields.reserveCapacity(block.count)
        var cookies: [String] = []
        var hasHost = false
        var hasLength = false
        for (name, value, _) in block {
            if name.utf8.first == UInt8(ascii: ":") {
                switch name {
                case ":method": method = value
                case ":path": path = value
                case ":authority": authority = value
                default: break  // :scheme (checked by NIOHTTP2), nothing else is allowed
                }
                continue
            }
            switch name {
            case "cookie":
                cookies.append(value)
                continue
            case "host": hasHost = true
            case "content-length": hasLength = true
            default: break
            }
            fields.append((name, value))
        }
        guard let method, let path else { throw NIOHTTP2Errors.missingPseudoHeader(method == nil ? ":method" : ":path") }
        if !hasHost, let authority { fields.insert(("host", authority), at: 0) }
        if cookies.count == 1 {
            fields.append(("cookie", cookies[0]))
        } else if cookies.count > 1 {
            fields.append(("cookie", cookies.joined(separator: "; ")))
        }
        let httpMethod = HTTPMethod(rawValue: method)
        let framingAdded = !hasLength && !Self.bodilessByDefault(httpMethod)
        if framingAdded { fields.append(endStream ? ("content-length", "0") : ("transfer-encoding", "chunked")) }
        let head = HTTPRequestHead(version: .http1_1, method: httpMethod, uri: path, headers: HTTPHeaders(fields))
        return (head, hasLength || framingAdded)
    }

    /// Methods whose requests usually have no body: no framing field is added for them until the stream says.
    private static func bodilessByDefault(_ method: HTTPMethod) -> Bool {
        switch method {
        case .GET, .HEAD, .DELETE, .CONNECT, .TRACE: true
        default: false
        }
    }

    private static func trailers(_ block: HPACKHeaders) -> HTTPHeaders {
        var fields: [(String, String)] = []
        fields.reserveCapacity(block.count)
        for (name, value, _) in block where name.utf8.first != UInt8(ascii: ":") { fields.append((name, value)) }
        return HTTPHeaders(fields)
    }

    /// An answer's head (with `status`) or trailers as an HTTP/2 header block.
    static func fields(status: UInt?, _ headers: HTTPHeaders) -> HPACKHeaders {
        var block = HPACKHeaders()
        block.reserveCapacity(headers.count + 1)
        if let status { block.add(name: ":status", value: String(status)) }
        let named = headers[canonicalForm: "connection"]
        for (name, value) in headers {
            let lowered = name.lowercased()
            if Self.connectionSpecific.contains(lowered) || named.contains(where: { $0.lowercased() == lowered }) { continue }
            block.add(name: lowered, value: value, indexing: Self.indexing(lowered))
        }
        return block
    }

    /// RFC 9113 §8.2.2.
    private static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    /// Values that change with nearly every answer fill the connection's HPACK table and push out the ones that
    /// repeat (and make every later field's lookup longer); they go as literals instead.
    static func indexing(_ name: String) -> HPACKIndexing {
        switch name {
        case "set-cookie": .neverIndexed
        case "date", "content-length", "x-request-id", "etag", "last-modified", "age", "expires", "location", "traceparent", "dpop-nonce":
            .nonIndexable
        default: .indexable
        }
    }
}
