import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Runs one Hummingbird application on a loopback address in a background task, so a stand-in can be
/// started and stopped from tests and from `gatehouse demo` without a service group of its own.
final class LoopbackListener: Sendable {
    private enum State: Sendable {
        case idle
        case starting
        case running(port: Int, group: ServiceGroup, task: Task<Void, Never>)
    }

    private let state = Mutex<State>(.idle)
    let host: String
    static let shutdownGracePeriod: Duration = .seconds(5)

    init(host: String = "127.0.0.1") {
        self.host = host
    }

    /// The bound port, or nil when not running.
    var port: Int? {
        state.withLock { state in
            if case .running(let port, _, _) = state { return port }
            return nil
        }
    }

    /// Binds `port` (0 = ephemeral), starts serving and returns the bound port once the server listens.
    /// Starting a running listener returns its port.
    func start<Responder: HTTPResponder>(port requestedPort: Int, responder: Responder, logger: Logger) async throws -> Int
    where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
        let alreadyRunning: Int?? = state.withLock { state in
            switch state {
            case .idle:
                state = .starting
                return .none
            case .starting:
                return .some(nil)
            case .running(let port, _, _):
                return .some(port)
            }
        }
        switch alreadyRunning {
        case .some(.some(let port)): return port
        case .some(.none): throw StandInError.alreadyStarting
        case .none: break
        }

        // The server reports its port through this stream; a failure to bind finishes it with the error.
        let (bound, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        let application = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: requestedPort)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? requestedPort)
            },
            logger: logger
        )
        // A service group of our own, so that stop() can shut the server down gracefully.
        let group = ServiceGroup(configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        let task = Task {
            do {
                try await group.run()
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        do {
            for try await port in bound {
                state.withLock { $0 = .running(port: port, group: group, task: task) }
                return port
            }
            throw StandInError.stoppedBeforeListening
        } catch {
            task.cancel()
            state.withLock { $0 = .idle }
            throw error
        }
    }

    /// Stops serving and waits until the server has closed its socket.
    func stop() async {
        let running: (ServiceGroup, Task<Void, Never>)? = state.withLock { state in
            guard case .running(_, let group, let task) = state else { return nil }
            state = .idle
            return (group, task)
        }
        guard let (group, task) = running else { return }
        // Graceful: idle connections close and requests in flight finish; a client that keeps a
        // response open longer than the grace period is cut off.
        await group.triggerGracefulShutdown()
        let deadline = Task {
            try await Task.sleep(for: Self.shutdownGracePeriod)
            task.cancel()
        }
        await task.value
        deadline.cancel()
    }
}
