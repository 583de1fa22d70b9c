import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// What the streams of one HTTP/2 connection are set up with, made once per connection rather than per stream: the
/// HTTP/1.1 channel whose request handlers each stream gets, where the router's streams go, the connection's
/// credential memo (``StreamsCredentialMemo``). Not `Sendable`: reached on the connection's event loop only
/// (through `NIOLoopBound`), where its streams live.
final class HTTP2StreamHandlers {
    let http1: GatewayHTTPChannel
    /// The streams whose requests the router serves.
    let routed: AsyncStream<GatewayHTTPChannel.RouterChannel>.Continuation
    let memo = StreamsCredentialMemo()
    /// The upstream timeouts of the requests its streams' lanes have out: one timer for the connection.
    let deadlines = LaneDeadlines()
    /// The lane's pool of the upstream the connection's last lane stream went to.
    var lanePools = LanePoolMemo()
    let logger: Logger
    /// `Strict-Transport-Security`'s value on the lane's final answers (`tls.hsts_seconds`), or `nil`.
    private let hsts: String?

    init(http1: GatewayHTTPChannel, routed: AsyncStream<GatewayHTTPChannel.RouterChannel>.Continuation, logger: Logger) {
        self.http1 = http1
        self.routed = routed
        self.logger = logger
        hsts = http1.hstsSeconds > 0 ? "max-age=\(http1.hstsSeconds)" : nil
    }

    /// A new stream's first handler: the relay's lane (``StreamLane``), which serves a simple relayed request alone
    /// and puts the usual handlers behind itself for any other; without a relay, the usual handlers.
    func setUp(_ channel: any Channel) throws {
        guard let relay = http1.relay else {
            _ = try install(on: channel)
            return
        }
        try channel.pipeline.syncOperations.addHandler(
            StreamLane(
                relay: relay, remoteAddress: Self.remoteAddress(of: channel)?.ipAddress, hsts: hsts, memo: memo,
                sendTimeout: http1.client.sendTimeout, handlers: self))
    }

    /// The stream's usual handlers, added last: ``HTTP2StreamCodec``, the relay's (returned), ``RouterHandoff``.
    func install(on channel: any Channel) throws -> APIRelayHandler? {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(HTTP2StreamCodec(bodyTimeout: http1.client.bodyTimeout, sendTimeout: http1.client.sendTimeout))
        let relayHandler = try http1.addRelayHandlers(to: pipeline, remoteAddress: Self.remoteAddress(of: channel), streamsMemo: memo)
        let (http1, routed, logger) = (http1, routed, logger)
        try pipeline.addHandler(
            RouterHandoff(
                triggers: .requests,
                deliver: { stream in
                    guard let stream else { return true }
                    if case .enqueued = routed.yield(stream) { return true }
                    return false
                }
            ) { pipeline in
                try http1.addRouterHandlers(to: pipeline, malformed: nil, logger: logger)
                // No half-closure: a stream's output ends with its answer's END_STREAM.
                return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
            })
        return relayHandler
    }

    /// A stream's own address is its connection's.
    private static func remoteAddress(of channel: any Channel) -> SocketAddress? {
        channel.parent?.remoteAddress ?? channel.remoteAddress
    }
}
