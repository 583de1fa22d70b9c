package import NIOHTTP1

/// An answer's head that ``ResponseHeadReader`` read: where each part of it is in the bytes it was read from, and
/// how its body is framed.
package struct ResponseHeadView: Equatable, Sendable {
    /// The head's bytes, its empty line included: where the body starts.
    package let length: Int
    /// Where the status line's CR LF starts.
    package let statusLineEnd: Int
    package let status: Int
    package let fields: [HeadField]
    package let framing: ResponseFraming

    /// The head as NIOHTTP1 gives it (what the relay's answer rules read), from the bytes it was read from.
    package func responseHead(in bytes: UnsafeRawBufferPointer) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        for field in fields {
            headers.add(name: Self.string(bytes, field.name), value: Self.string(bytes, field.value))
        }
        return HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
    }

    private static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
