import Hummingbird
import NIOCore

/// A request body on its way upstream.
enum ForwardBody: Sendable {
    case empty
    /// Small enough to keep: the request can be replayed after a refresh.
    case buffered(ByteBuffer)
    /// Streamed through as it arrives; cannot be replayed.
    case streamed(RequestBody, length: Int?)

    var isReplayable: Bool {
        if case .streamed = self { return false }
        return true
    }
}
