import NIOCore
import NIOEmbedded
import NIOHTTP1

/// NIOHTTP1's reading of answers, set up as the relay's backend connections set it up (a `1xx` other than `101`
/// dropped, the final answer read after it): the byte readers' agreement tests compare against it.
enum ResponseDecoding {
    /// The parts the decoder makes of `bytes` after a request of each of `methods` went out (then the end of input,
    /// when `close`), in order, and whether it refused them (the parts before the refusal are kept).
    static func parts(
        of bytes: [UInt8], after methods: [HTTPMethod] = [.GET], close: Bool = false
    ) -> (parts: [HTTPClientResponsePart], refused: Bool) {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        var refused = false
        do {
            try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .forwardBytes, enableOutboundHeaderValidation: false)
            for method in methods {
                try channel.writeOutbound(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: "/")))
                try channel.writeOutbound(HTTPClientRequestPart.end(nil))
            }
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            if close { channel.pipeline.fireChannelInactive() }
        } catch {
            refused = true
        }
        var parts: [HTTPClientResponsePart] = []
        while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) { parts.append(part) }
        return (parts, refused)
    }
}
