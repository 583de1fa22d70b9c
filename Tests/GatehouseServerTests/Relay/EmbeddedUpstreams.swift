import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import GatehouseServer

/// Backend connections over `EmbeddedChannel`s for ``APIRelayHandler``: each has the HTTP client codec and
/// the ``UpstreamConnectionHandler`` of a real one, so a test reads the request's bytes and writes the
/// answer's. Idle connections are reused most recent first, as ``UpstreamConnectionPool`` does.
final class EmbeddedUpstreams: UpstreamConnectionSource {
    /// No connection could be made.
    struct Refused: Error {}

    private let loop: EmbeddedEventLoop
    /// Every connection made, in order.
    private(set) var connections: [UpstreamConnection] = []
    /// How many connections came back reusable.
    private(set) var released = 0
    private var idle: [UpstreamConnection] = []
    /// While set, connections are ready only when ``completeConnect()`` says so.
    var holdConnects = false
    private var held: [(EventLoopPromise<UpstreamConnection>, UpstreamConnection)] = []

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    func takeIdle() -> UpstreamConnection? {
        while let connection = idle.popLast() {
            if connection.isActive {
                connection.reused = true
                return connection
            }
        }
        return nil
    }

    func connect() -> EventLoopFuture<UpstreamConnection>.Isolated {
        let channel = EmbeddedChannel(loop: loop)
        let handler = UpstreamConnectionHandler()
        do {
            try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .forwardBytes, enableOutboundHeaderValidation: false)
            try channel.pipeline.syncOperations.addHandler(handler)
            channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080), promise: nil)
        } catch {
            return loop.makeFailedFuture(error).assumeIsolated()
        }
        let connection = UpstreamConnection(channel: channel, handler: handler)
        connections.append(connection)
        guard holdConnects else { return loop.assumeIsolated().makeSucceededFuture(connection).assumeIsolated() }
        let promise = loop.makePromise(of: UpstreamConnection.self)
        held.append((promise, connection))
        return promise.futureResult.assumeIsolated()
    }

    func release(_ connection: UpstreamConnection) {
        released += 1
        connection.handler.receiver = nil
        idle.append(connection)
    }

    /// The oldest held connection is ready (or fails, when `failing`).
    func completeConnect(failing: Bool = false) {
        guard !held.isEmpty else { return }
        let (promise, connection) = held.removeFirst()
        if failing {
            promise.fail(Refused())
        } else {
            promise.assumeIsolated().succeed(connection)
        }
    }

    /// The channel of connection `index`.
    func channel(_ index: Int) -> EmbeddedChannel {
        connections[index].channel as! EmbeddedChannel
    }

    /// The bytes written on connection `index` since the last call.
    func sent(_ index: Int) throws -> String {
        var text = ""
        while var buffer = try channel(index).readOutbound(as: ByteBuffer.self) {
            text += buffer.readString(length: buffer.readableBytes) ?? ""
        }
        return text
    }

    /// The backend writes `text` on connection `index`.
    func answer(_ index: Int, _ text: String) throws {
        try channel(index).writeInbound(ByteBuffer(string: text))
    }
}
