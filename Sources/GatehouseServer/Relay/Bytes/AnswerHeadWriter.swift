package import GatehouseCore
package import NIOCore

/// The client's head of a backend's answer, written as bytes from the bytes it was read from
/// (``ResponseHeadReader``): the relay's answer rules (``APIRelay/clientHead(of:)``, then `X-Request-Id` and
/// `Connection: close`) without NIOHTTP1's parts.
///
/// - The status line as the backend sent it, its version `HTTP/1.1`.
/// - Its fields, but the hop-by-hop ones (``HopByHopHeaders``: the fixed names and those `Connection` lists).
///   `Transfer-Encoding: chunked` stays when the body is chunked: the relay passes the chunks on as they came,
///   where NIOHTTP1 would have undone and redone them.
/// - `Transfer-Encoding: chunked` added to an answer whose body ends with the connection: the relay sends it in
///   chunks, as NIOHTTP1's encoder does, so that the client's connection outlives it.
/// - `Strict-Transport-Security` when the gateway sets it (`tls.hsts_seconds`), in place of the backend's.
/// - `X-Request-Id` (not on a `1xx`), and `Connection: close` when the client's connection ends after this answer.
package enum AnswerHeadWriter {
    /// - Parameters:
    ///   - requestID: the request's id; `nil` for an interim (`1xx`) answer, which goes on as it came.
    ///   - hsts: the `Strict-Transport-Security` value of a final answer, or `nil`.
    package static func write(
        _ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, requestID: String?, close: Bool, hsts: String? = nil,
        into head: inout ByteBuffer
    ) {
        // The client's answer is HTTP/1.1 whatever the backend's version (an `HTTP/1.0` one's connection is simply not kept).
        head.writeStaticString("HTTP/1.1")
        head.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[8..<view.statusLineEnd + 2]))
        let listed = HopByHopHeaders.listed(bytes, in: view.fields)
        for field in view.fields {
            if HopByHopHeaders.isFixed(bytes, field.name) {
                guard view.framing == .chunked, HeadBytes.equalIgnoringCase(bytes, field.name, "transfer-encoding") else { continue }
            } else if listed.contains(where: { HeadBytes.equalIgnoringCase(bytes, field.name, $0) }) {
                continue
            } else if hsts != nil, HeadBytes.equalIgnoringCase(bytes, field.name, "strict-transport-security") {
                continue
            }
            head.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[field.name.lowerBound..<field.value.upperBound]))
            head.writeStaticString("\r\n")
        }
        if view.framing == .untilClose { head.writeStaticString("transfer-encoding: chunked\r\n") }
        if let hsts {
            head.writeStaticString("Strict-Transport-Security: ")
            head.writeString(hsts)
            head.writeStaticString("\r\n")
        }
        if let requestID {
            head.writeStaticString("X-Request-Id: ")
            head.writeString(requestID)
            head.writeStaticString("\r\n")
        }
        head.writeStaticString(close ? "Connection: close\r\n\r\n" : "\r\n")
    }
}
