import Foundation
import GatehouseCore
import NIOCore
import NIOHTTP1

/// Turns an HTTP/1.1 request in absolute form (`GET https://admin.test/v1/api/x HTTP/1.1`) into the origin form
/// every handler behind it reads (`/v1/api/x`, `Host: admin.test`): the target's authority is the request's host
/// (RFC 9112 §3.2.2), so per-host rules, `/v1/authz` and the forwarded head judge the host the client named,
/// not a `Host` field it set beside it. A `Host` that disagrees with the target's authority, an authority with
/// user information, or a scheme other than `http`/`https` is answered `400 invalid_request`, and the
/// connection closed (what follows on it cannot be trusted to be framed as the client meant).
///
/// HTTP/1.1 connections only; an HTTP/2 stream's authority is checked by ``HTTP2RequestTargetCheck``.
final class AbsoluteFormAdapter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The rest of a refused request is dropped; the connection closes after the answer.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refused { return }
        // Origin form, the usual case, costs one byte's look.
        guard case .head(var head) = unwrapInboundIn(data), let first = head.uri.utf8.first, first != UInt8(ascii: "/"),
            head.method != .CONNECT, head.uri != "*"
        else {
            context.fireChannelRead(data)
            return
        }
        switch Self.originForm(of: head.uri) {
        case .none:
            refuse("The request target is neither an absolute path nor an absolute http(s) URI.", context: context)
        case .some(let (authority, target)):
            let lowered = authority.lowercased()
            guard head.headers["host"].allSatisfy({ $0.lowercased() == lowered }) else {
                refuse("The request's Host field names another host than its target.", context: context)
                return
            }
            head.uri = target
            head.headers.replaceOrAdd(name: "Host", value: authority)
            context.fireChannelRead(wrapInboundOut(.head(head)))
        }
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
        Problem.answerAndClose(.invalidRequest(detail), context: context)
    }
}
