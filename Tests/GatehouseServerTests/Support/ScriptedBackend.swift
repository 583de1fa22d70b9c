import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A backend that misbehaves on purpose, on a loopback port: it reads raw bytes (a request head ends at
/// the first empty line) and answers as its ``Script`` says.
final class ScriptedBackend: Sendable {
    enum Script: Sendable {
        /// Answers the first request of each connection (`200`, body `connection <n>`, kept alive) and closes
        /// the connection, unanswered, when a second request starts on it.
        case dropSecondRequest
        /// Reads and never answers.
        case silent
        /// Answers every request with this head (status line and fields, no final blank line) and body `ok`,
        /// keeping the connection.
        case answer(String)
        /// Answers every request with these bytes as they are (head and body); closes the connection after them when
        /// `close`.
        case raw(String, close: Bool)
        /// ``answer(_:)`` after `delay` seconds.
        case late(TimeInterval, String)
    }

    /// What the backend saw.
    struct Record: Sendable {
        var connections = 0
        var requestHeads: [String] = []
        var bytes = 0
    }

    let port: Int
    private let channel: any Channel
    private let record: Recorder

    private init(port: Int, channel: any Channel, record: Recorder) {
        self.port = port
        self.channel = channel
        self.record = record
    }

    var seen: Record { record.value.withLock { $0 } }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    static func start(_ script: Script) async throws -> ScriptedBackend {
        let shared = Recorder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let index = shared.value.withLock { record in
                    record.connections += 1
                    return record.connections
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(script: script, connection: index, shared: shared))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ScriptedBackend(port: channel.localAddress?.port ?? 0, channel: channel, record: shared)
    }

    func stop() async {
        try? await channel.close()
    }

    /// What the connections write into.
    private final class Recorder: Sendable {
        let value = Mutex(Record())
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let script: Script
        let connection: Int
        let shared: Recorder
        private var received = ""
        private var answered = 0

        init(script: Script, connection: Int, shared: Recorder) {
            self.script = script
            self.connection = connection
            self.shared = shared
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let text = buffer.readString(length: buffer.readableBytes) ?? ""
            received += text
            shared.value.withLock { $0.bytes += text.utf8.count }
            // Every complete head seen so far on this connection.
            while let end = received.range(of: "\r\n\r\n") {
                let head = String(received[..<end.lowerBound])
                received = String(received[end.upperBound...])
                shared.value.withLock { $0.requestHeads.append(head) }
                switch script {
                case .silent:
                    continue
                case .answer(let responseHead):
                    let response = "\(responseHead)\r\nContent-Length: 2\r\n\r\nok"
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response)), promise: nil)
                case .raw(let response, let close):
                    let written = context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response)))
                    if close { written.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
                case .late(let delay, let responseHead):
                    let response = ByteBuffer(string: "\(responseHead)\r\nContent-Length: 2\r\n\r\nok")
                    context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay * 1000))) {
                        context.writeAndFlush(self.wrapOutboundOut(response), promise: nil)
                    }
                case .dropSecondRequest:
                    answered += 1
                    if answered >= 2 {
                        context.close(promise: nil)
                        return
                    }
                    let body = "connection \(connection)"
                    let response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\n\r\n\(body)"
                    context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response)), promise: nil)
                }
            }
        }
    }
}
