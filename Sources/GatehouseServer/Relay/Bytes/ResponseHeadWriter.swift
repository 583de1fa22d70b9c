package import NIOCore
package import NIOHTTP1

/// An answer head the gateway makes itself (the relay's problem answers), written as HTTP/1.1 bytes as NIOHTTP1's
/// `HTTPResponseEncoder` writes it: the status line, the fields as they are, the empty line. Its heads carry their
/// own `Content-Length`, so the encoder's framing corrections never apply to them.
package enum ResponseHeadWriter {
    package static func write(_ head: HTTPResponseHead, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(head.status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(head.status.reasonPhrase)
        buffer.writeStaticString("\r\n")
        for (name, value) in head.headers {
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
    }
}
