import GatehouseCore
import HTTPTypes
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Refuses with `400 invalid_request` an HTTP/2 request whose target the handlers behind could misread: a
/// `host` field that names another authority than `:authority` (RFC 9113 §8.3.1 calls it malformed), or a
/// `:path` that is not origin-form (`*` only for `OPTIONS`, RFC 9113 §8.3.1 again).
///
/// In front of `HTTP2FramePayloadToHTTP1ServerCodec`, which keeps `host` and drops `:authority` when both come:
/// once this check has passed, the `Host` every handler reads is the request's authority, so per-host rules,
/// `/v1/authz` and the forwarded head all see the host the client's target named.
final class HTTP2RequestTargetCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var headSeen = false
    /// The request was answered here: nothing more of the stream goes on.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        // Only the first HEADERS frame is the request head; a later one carries trailers.
        guard !headSeen, case .headers(let headers) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        headSeen = true
        guard let detail = Self.problem(with: headers.headers) else {
            context.fireChannelRead(data)
            return
        }
        refused = true
        let error = GatehouseError.invalidRequest(detail)
        let body = Problem.body(error)
        var fields = HPACKHeaders([(":status", "400")])
        for field in Problem.headers(error) { fields.add(name: field.name.canonicalName, value: field.value) }
        fields.add(name: "content-length", value: String(body.readableBytes))
        context.write(wrapOutboundOut(.headers(.init(headers: fields))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

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
}
