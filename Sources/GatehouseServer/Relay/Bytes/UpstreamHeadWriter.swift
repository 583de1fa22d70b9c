package import NIOCore
package import NIOHTTP1

/// The upstream head the relay's decision made, written as HTTP/1.1 bytes: the request line, each field as
/// `name: value`, the empty line. Byte for byte what NIOHTTP1's `HTTPRequestEncoder` writes, its framing corrections
/// included: no `Content-Length` or `Transfer-Encoding` for `TRACE`; `Transfer-Encoding` dropped beside a
/// `Content-Length`; `transfer-encoding: chunked`, last, for a `POST`, `PUT` or `PATCH` without `Content-Length`.
package enum UpstreamHeadWriter {
    package static func write(_ head: HTTPRequestHead, into buffer: inout ByteBuffer) {
        buffer.writeString(head.method.rawValue)
        buffer.writeStaticString(" ")
        buffer.writeString(head.uri)
        buffer.writeStaticString(" HTTP/1.1\r\n")
        let hasLength = head.headers.contains(name: "content-length")
        let (dropLength, dropEncoding, addChunked): (Bool, Bool, Bool) =
            switch head.method {
            case .TRACE: (true, true, false)
            case .POST, .PUT, .PATCH: (false, true, !hasLength)
            default: (false, hasLength, false)
            }
        for (name, value) in head.headers {
            if dropLength, name.utf8.count == 14, ASCII.equalsIgnoringCase(name, "content-length") { continue }
            if dropEncoding, name.utf8.count == 17, ASCII.equalsIgnoringCase(name, "transfer-encoding") { continue }
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString(addChunked ? "transfer-encoding: chunked\r\n\r\n" : "\r\n")
    }
}
