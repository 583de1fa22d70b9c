import GatehouseCore
package import NIOHTTP1

extension ResponseHeadView {
    /// The head as NIOHTTP1 gives it (what the relay's answer rules read), from the bytes it was read from.
    package func responseHead(in bytes: UnsafeRawBufferPointer) -> HTTPResponseHead {
        HTTPResponseHead(
            version: http10 ? .http1_0 : .http1_1, status: HTTPResponseStatus(statusCode: status), headers: HeadField.headers(fields, in: bytes))
    }
}
