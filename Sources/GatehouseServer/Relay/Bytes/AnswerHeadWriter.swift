package import GatehouseCore
package import NIOCore

/// The client's head of a backend's answer, written as bytes from the bytes it was read from
/// (``ResponseHeadReader``): the relay's answer rules (``APIRelay/clientHead(of:)``, then `X-Request-Id` and
/// `Connection: close`) without NIOHTTP1's parts.
///
/// - The status line as the backend sent it.
/// - Its fields, but the hop-by-hop ones (``HopByHopHeaders``: the fixed names and those `Connection` lists).
///   `Transfer-Encoding: chunked` stays when the body is chunked: the relay passes the chunks on as they came,
///   where NIOHTTP1 would have undone and redone them.
/// - `X-Request-Id`, and `Connection: close` when the client's connection ends after this answer.
package enum AnswerHeadWriter {
    package static func write(
        _ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, requestID: String, close: Bool, into head: inout ByteBuffer
    ) {
        head.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<view.statusLineEnd + 2]))
        let listed = HopByHopHeaders.listed(bytes, in: view.fields)
        for field in view.fields {
            if HopByHopHeaders.isFixed(bytes, field.name) {
                guard view.framing == .chunked, HeadBytes.equalIgnoringCase(bytes, field.name, "transfer-encoding") else { continue }
            } else if listed.contains(where: { HeadBytes.equalIgnoringCase(bytes, field.name, $0) }) {
                continue
            }
            head.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[field.name.lowerBound..<field.value.upperBound]))
            head.writeStaticString("\r\n")
        }
        head.writeStaticString("X-Request-Id: ")
        head.writeString(requestID)
        head.writeStaticString(close ? "\r\nConnection: close\r\n\r\n" : "\r\n\r\n")
    }
}
