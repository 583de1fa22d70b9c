import NIOCore
import NIOEmbedded
import Testing

@testable import GatehouseServer

/// The client send timeout (``ClientSendClock``) on `EmbeddedChannel`, whose clock moves only when the test says:
/// an HTTP/1.1 connection (``HTTP1ConnectionGuard``), an HTTP/2 stream (``HTTP2StreamCodec``) and an HTTP/2
/// connection (``HTTP2ConnectionKeeper``) whose client takes nothing of what waits for it are closed after the
/// timeout; one that takes a part in time is not.
@Suite("Client send timeout")
struct ClientSendTimeoutTests {
    enum Front: CaseIterable {
        case http1Connection, http2Stream, http2Connection
    }

    private static func channel(_ front: Front) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        // Idle and body timeouts far beyond the send timeout: only the send clock is looked at.
        let handler: any ChannelHandler =
            switch front {
            case .http1Connection: HTTP1ConnectionGuard(idleTimeout: .hours(1), bodyTimeout: .hours(1), sendTimeout: .seconds(60))
            case .http2Stream: HTTP2StreamCodec(bodyTimeout: .hours(1), sendTimeout: .seconds(60))
            case .http2Connection: HTTP2ConnectionKeeper(idleTimeout: .hours(1), sendTimeout: .seconds(60))
            }
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    private static func writable(_ channel: EmbeddedChannel, _ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }

    /// Held up from now on: still open a second before the timeout, closed a second after it.
    private static func expectClosedAfterTimeout(_ channel: EmbeddedChannel) {
        writable(channel, false)
        channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test("a client that takes nothing of what waits is closed after the timeout, not before", arguments: Front.allCases)
    func stalled(_ front: Front) throws {
        Self.expectClosedAfterTimeout(try Self.channel(front))
    }

    @Test("a client that takes a part in time is not closed, and its clock starts again", arguments: Front.allCases)
    func progress(_ front: Front) throws {
        let channel = try Self.channel(front)
        Self.writable(channel, false)
        channel.embeddedEventLoop.advanceTime(by: .seconds(50))
        Self.writable(channel, true)
        channel.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(channel.isActive)
        Self.expectClosedAfterTimeout(channel)
    }

    @Test("a connection that is never held up has no timer", arguments: Front.allCases)
    func neverHeld(_ front: Front) throws {
        let channel = try Self.channel(front)
        Self.writable(channel, true)
        channel.embeddedEventLoop.advanceTime(by: .seconds(600))
        #expect(channel.isActive)
    }
}
