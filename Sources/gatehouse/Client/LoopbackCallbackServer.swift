import NIOCore
import NIOHTTP1
import NIOPosix

/// The loopback redirect listener of `gatehouse login` (RFC 8252 §7.3): HTTP/1.1 on `127.0.0.1`, on a port the
/// system picks. It answers `GET /callback` with the page the login decides, and every other request with 404.
struct LoopbackCallbackServer: Sendable {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// The bound port.
    let port: Int
    private let listener: NIOAsyncChannel<Connection, Never>

    /// `http://127.0.0.1:<port>/callback`.
    var redirectURI: String { "http://127.0.0.1:\(port)/callback" }

    /// Binds `127.0.0.1` on a free port.
    static func bind() async throws -> LoopbackCallbackServer {
        let listener: NIOAsyncChannel<Connection, Never>
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.backlog, value: 32)
                .bind(host: "127.0.0.1", port: 0) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw ClientFailure("cannot listen on 127.0.0.1 for the browser's return: \(error)")
        }
        guard let port = listener.channel.localAddress?.port else {
            listener.channel.close(promise: nil)
            throw ClientFailure("cannot listen on 127.0.0.1 for the browser's return: no port")
        }
        return LoopbackCallbackServer(port: port, listener: listener)
    }

    /// Serves until `handle` gives an outcome for a callback (that outcome is returned once its page was sent)
    /// or `timeout` passes (`timeoutFailure` is thrown); then the listener is closed. Call it once.
    /// - Parameters:
    ///   - timeout: how long to wait for the browser.
    ///   - timeoutFailure: what to throw after `timeout`.
    ///   - handle: decides the page for a callback, and whether it ends the wait (a non-nil outcome).
    func serve<T: Sendable>(
        timeout: Duration, timeoutFailure: ClientFailure,
        _ handle: @escaping @Sendable (LoopbackCallback) async -> (page: LoopbackPage, outcome: T?)
    ) async throws -> T {
        let (outcomes, delivery) = AsyncStream.makeStream(of: T.self)
        defer { delivery.finish() }
        let listener = self.listener
        let result = await withTaskGroup(of: Result<T, ClientFailure>?.self) { group -> Result<T, ClientFailure> in
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(timeoutFailure)
            }
            group.addTask {
                do {
                    try await listener.executeThenClose { inbound in
                        try await withThrowingDiscardingTaskGroup { connections in
                            for try await connection in inbound {
                                connections.addTask {
                                    if let outcome = await Self.answer(connection, handle: handle) { delivery.yield(outcome) }
                                }
                            }
                        }
                    }
                } catch {
                    return Task.isCancelled ? nil : .failure(ClientFailure("the loopback listener failed: \(error)"))
                }
                return Task.isCancelled ? nil : .failure(ClientFailure("the loopback listener stopped"))
            }
            group.addTask {
                for await outcome in outcomes { return .success(outcome) }
                return nil
            }
            while let event = await group.next() {
                guard let event else { continue }
                group.cancelAll()
                listener.channel.close(promise: nil)
                return event
            }
            return .failure(ClientFailure("the loopback listener stopped"))
        }
        return try result.get()
    }

    /// Reads one request of a connection, answers it, closes the connection, and returns the outcome `handle`
    /// gave (nil for any other request, or when the connection failed).
    private static func answer<T: Sendable>(
        _ connection: Connection, handle: @Sendable (LoopbackCallback) async -> (page: LoopbackPage, outcome: T?)
    ) async -> T? {
        do {
            return try await connection.executeThenClose { inbound, outbound -> T? in
                var head: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case .head(let requestHead):
                        head = requestHead
                    case .body:
                        continue
                    case .end:
                        guard let head else { return nil }
                        var page = LoopbackPage.notFound
                        var outcome: T?
                        if head.method == .GET, let callback = LoopbackCallback(target: head.uri) {
                            (page, outcome) = await handle(callback)
                        }
                        // The outcome stands even when the browser is gone before the page is written (the code
                        // was redeemed already): a failed write is not a failed sign-in.
                        try? await write(page, to: outbound)
                        return outcome
                    }
                }
                return nil
            }
        } catch {
            return nil
        }
    }

    private static func write(_ page: LoopbackPage, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
        let body = ByteBuffer(string: page.html)
        let headers = HTTPHeaders([
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", String(body.readableBytes)),
            ("Cache-Control", "no-store"),
            ("Referrer-Policy", "no-referrer"),
            // A page of the client's own, on loopback: no script, and framed by nothing, as the gateway's pages.
            ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
            ("X-Frame-Options", "DENY"),
            ("Connection", "close"),
        ])
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: page.status, headers: headers)))
        try await outbound.write(.body(.byteBuffer(body)))
        try await outbound.write(.end(nil))
    }
}
