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
    /// The upstream timeouts of the requests its lane streams have out: one timer for the connection.
    let deadlines = LaneDeadlines()
    /// The lane's pool of the upstream the connection's last lane stream went to.
    var lanePools = LanePoolMemo()
    let logger: Logger
    /// `Strict-Transport-Security`'s value on the lane's final answers (`tls.hsts_seconds`), or `nil`.
    let hsts: String?
    /// `limits.client_send_timeout_seconds`, after which a lane stream whose client takes nothing is reset.
    var sendTimeout: TimeAmount { http1.client.sendTimeout }
    /// The lane's decision of the stream it is handing to the multiplexer, which sets the stream's channel up while
    /// the lane hands it over (``HTTP2Lane/handOver(_:frame:plan:inReadCycle:)``).
    var handOverPlan: (APIRelay.Plan, CredentialMemo?)?

    init(http1: GatewayHTTPChannel, routed: AsyncStream<GatewayHTTPChannel.RouterChannel>.Continuation, logger: Logger) {
        self.http1 = http1
        self.routed = routed
        self.logger = logger
        hsts = http1.hstsSeconds > 0 ? "max-age=\(http1.hstsSeconds)" : nil
    }

    /// The connection's lane (``HTTP2Lane``), which serves the simple relayed requests itself; `nil` without a relay.
    func lane() -> HTTP2Lane? {
        http1.relay.map { HTTP2Lane(relay: $0, handlers: self) }
    }

    /// A new stream channel's handlers (a stream the lane does not serve, or handed over with its decision).
    func setUp(_ channel: any Channel) throws {
        let relayHandler = try install(on: channel)
        if let plan = handOverPlan {
            handOverPlan = nil
            relayHandler?.decidedByLane = plan
        }
    }

    /// The stream's usual handlers: ``HTTP2StreamCodec``, the relay's (returned), ``RouterHandoff``.
    private func install(on channel: any Channel) throws -> APIRelayHandler? {
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
