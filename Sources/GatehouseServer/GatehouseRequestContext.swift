public import Hummingbird
import NIOCore

/// Per-request state: Hummingbird's core context plus the peer address for `X-Forwarded-For`.
public struct GatehouseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address, when known.
    public var remoteAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }
}
