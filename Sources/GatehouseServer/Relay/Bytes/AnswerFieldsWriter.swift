import GatehouseCore
import NIOHPACK

/// The HTTP/2 header block of a backend's answer read from the bytes (``ResponseHeadReader``): what
/// ``AnswerHeadWriter`` writes for an HTTP/1.1 client, as an HTTP/2 stream's relayed answer has it through
/// ``HTTP2StreamCodec`` (the relay's answer rules, then the codec's conversion), without NIOHTTP1's parts.
///
/// - `:status`, then the fields in order with their names in lower case, but the hop-by-hop ones
///   (``HopByHopHeaders``: the fixed names, `Transfer-Encoding` among them whatever the framing, and those
///   `Connection` lists), which RFC 9113 §8.2.2 forbids on HTTP/2 anyway.
/// - `strict-transport-security` when the gateway sets it (`tls.hsts_seconds`), in place of the backend's.
/// - `x-request-id` (not on a `1xx`).
/// - Each field indexed in the connection's HPACK table as the codec does it (``HTTP2StreamCodec/indexing(_:)``).
enum AnswerFieldsWriter {
    /// - Parameters:
    ///   - requestID: the request's id; `nil` for an interim (`1xx`) answer, which goes on as it came.
    ///   - hsts: the `Strict-Transport-Security` value of a final answer, or `nil`.
    static func fields(_ view: ResponseHeadView, of bytes: UnsafeRawBufferPointer, requestID: String?, hsts: String?) -> HPACKHeaders {
        var block = HPACKHeaders()
        block.reserveCapacity(view.fields.count + 3)
        block.add(name: ":status", value: String(view.status))
        let listed = HopByHopHeaders.listed(bytes, in: view.fields)
        for field in view.fields {
            if HopByHopHeaders.isFixed(bytes, field.name) || listed.contains(where: { HeadBytes.equalIgnoringCase(bytes, field.name, $0) }) {
                continue
            }
            if hsts != nil, HeadBytes.equalIgnoringCase(bytes, field.name, "strict-transport-security") { continue }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[field.name]), as: UTF8.self).lowercased()
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[field.value]), as: UTF8.self)
            block.add(name: name, value: value, indexing: HTTP2StreamCodec.indexing(name))
        }
        if let hsts { block.add(name: "strict-transport-security", value: hsts) }
        if let requestID { block.add(name: "x-request-id", value: requestID, indexing: .nonIndexable) }
        return block
    }
}
