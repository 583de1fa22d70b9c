import GatehouseCore
package import NIOHTTP1

extension RequestHeadView {
    /// The head as NIOHTTP1 gives it (what the gateway's decision reads), from the bytes it was read from.
    package func requestHead(in bytes: UnsafeRawBufferPointer) -> HTTPRequestHead {
        HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: HeadField.string(bytes, method)), uri: HeadField.string(bytes, target),
            headers: HeadField.headers(fields, in: bytes))
    }
}
