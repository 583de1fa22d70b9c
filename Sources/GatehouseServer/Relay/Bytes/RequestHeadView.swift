package import NIOHTTP1

/// A request head that ``RequestHeadReader`` read: where each part of it is in the bytes it was read from.
package struct RequestHeadView: Equatable, Sendable {
    /// The head's bytes, its empty line included: where a body or the next request starts.
    package let length: Int
    package let method: Range<Int>
    package let target: Range<Int>
    package let fields: [HeadField]

    /// The head as NIOHTTP1 gives it (what the gateway's decision reads), from the bytes it was read from.
    package func requestHead(in bytes: UnsafeRawBufferPointer) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        for field in fields {
            headers.add(name: Self.string(bytes, field.name), value: Self.string(bytes, field.value))
        }
        return HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: Self.string(bytes, method)), uri: Self.string(bytes, target), headers: headers)
    }

    private static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
