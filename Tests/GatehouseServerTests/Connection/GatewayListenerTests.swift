import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import GatehouseServer

/// ``GatewayListener`` over real sockets on loopback: one listening socket per event loop on one port, each
/// connection set up on the loop that accepted it, a port another listener holds refused, the graceful shutdown
/// waiting for the open connections.
@Suite("The gateway's listener", .timeLimit(.minutes(1)))
struct GatewayListenerTests {
    /// What the listener's `setup` saw of each connection: whether it was on the loop of the socket that accepted it.
    private final class Accepted: Sendable {
        let onAcceptingLoop = Mutex<[Bool]>([])
        let channels = Mutex<[any Channel]>([])
    }

    private final class Flag: Sendable {
        let raised = Mutex(false)
    }

    private static let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    private static func listener(port: Int, accepted: Accepted, running: AsyncStream<Int>.Continuation) -> GatewayListener {
        GatewayListener(
            host: "127.0.0.1", port: port, backlog: 16, group: group,
            setup: { channel in
                accepted.onAcceptingLoop.withLock { $0.append(channel.eventLoop === channel.parent?.eventLoop) }
                accepted.channels.withLock { $0.append(channel) }
            },
            onRunning: { running.yield($0) }, logger: Logger(label: "listener-test"))
    }

    /// Runs a listener in a service group; `body` gets its port and the group, to shut it down.
    private static func withListener(
        port: Int = 0, accepted: Accepted, _ body: (Int, ServiceGroup, Task<Void, any Error>) async throws -> Void
    ) async throws {
        let (running, continuation) = AsyncStream<Int>.makeStream()
        let group = ServiceGroup(
            configuration: .init(services: [listener(port: port, accepted: accepted, running: continuation)], logger: Logger(label: "listener-test")))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = running.makeAsyncIterator()
        guard let bound = await iterator.next() else {
            _ = try await task.value
            Issue.record("the listener ended before it listened")
            return
        }
        try await body(bound, group, task)
        await group.triggerGracefulShutdown()
        try await task.value
    }

    private static func connect(_ port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get()
    }

    @Test("every connection is set up on the event loop of the socket that accepted it, and both loops accept")
    func connectionsStayOnTheirLoop() async throws {
        let accepted = Accepted()
        try await Self.withListener(accepted: accepted) { port, _, _ in
            var clients: [any Channel] = []
            // The kernel spreads connections by their addresses: with 40, each of the two sockets gets some.
            for _ in 0..<40 { clients.append(try await Self.connect(port)) }
            for _ in 0..<100 where accepted.onAcceptingLoop.withLock({ $0.count }) < 40 { try await Task.sleep(for: .milliseconds(20)) }
            let loops = Set(accepted.channels.withLock { $0.map { ObjectIdentifier($0.eventLoop) } })
            #expect(accepted.onAcceptingLoop.withLock { $0 } == Array(repeating: true, count: 40))
            #expect(loops.count == 2)
            for client in clients { try await client.close() }
            // Half-closure is allowed and no handler here ends a connection at its client's end: the shutdown would
            // wait for them.
            for served in accepted.channels.withLock({ $0 }) { try? await served.close() }
        }
    }

    @Test("a port another listener holds is refused, even when that listener shares its port with its own sockets")
    func aTakenPortIsRefused() async throws {
        try await Self.withListener(accepted: Accepted()) { port, _, _ in
            let (running, continuation) = AsyncStream<Int>.makeStream()
            let second = Task { try await Self.listener(port: port, accepted: Accepted(), running: continuation).run() }
            Task {
                _ = await second.result
                continuation.finish()
            }
            // Listening (sharing the port) or not: the stream yields the port, or ends when `run` has thrown.
            var iterator = running.makeAsyncIterator()
            if let shared = await iterator.next() {
                Issue.record("a second listener shares port \(shared)")
                second.cancel()
            }
            await #expect(throws: IOError.self) { try await second.value }
        }
    }

    @Test("the graceful shutdown stops accepting, then returns once the last open connection has closed")
    func shutdownWaitsForOpenConnections() async throws {
        let accepted = Accepted()
        let ended = Flag()
        try await Self.withListener(accepted: accepted) { port, group, task in
            let client = try await Self.connect(port)
            for _ in 0..<100 where accepted.channels.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
            let served = try #require(accepted.channels.withLock { $0.first })
            Task {
                _ = await task.result
                ended.raised.withLock { $0 = true }
            }
            await group.triggerGracefulShutdown()
            // The shutdown reaches the listener through the service group: until then a connection may still be
            // accepted (the test closes each, as no handler here ends one). Then the sockets refuse connections.
            var refused = false
            for _ in 0..<500 {
                guard let late = try? await Self.connect(port) else {
                    refused = true
                    break
                }
                try? await late.close()
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(refused)
            // Every connection it accepted is still open: the listener waits.
            try await Task.sleep(for: .milliseconds(200))
            #expect(!ended.raised.withLock { $0 })
            for open in accepted.channels.withLock({ $0 }) where open !== served { try? await open.close() }
            try await Task.sleep(for: .milliseconds(100))
            #expect(!ended.raised.withLock { $0 })
            try await served.close()
            for _ in 0..<250 where !ended.raised.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(ended.raised.withLock { $0 })
            try? await client.close()
        }
    }
}
