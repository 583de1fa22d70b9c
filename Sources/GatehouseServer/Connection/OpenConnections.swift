import NIOCore
import ServiceLifecycle
import Synchronization

/// The gateway's open client connections, each counted from its setup to its close; as a service, it holds the
/// graceful shutdown until the last one has closed.
///
/// Hummingbird's server waits at shutdown for the task it gives each connection. The gateway's connection tasks
/// end at once (``GatewayHTTPChannel``, ``GatewayTLSChannel``): a connection the relay serves alone lives on its
/// event loop, and only a request for the router, or an HTTP/2 connection, starts a task of its own. Those
/// connections are waited for here instead. The service comes after the server in the application's services, so
/// the shutdown reaches it once the server has stopped accepting and asked every connection to end after the
/// answer it is sending (the connections quiesce); it then returns when they have.
final class OpenConnections: Service, Sendable {
    private struct State {
        var open = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The wait was cancelled: nothing waits any more.
        var released = false
    }

    private let state = Mutex(State())

    init() {}

    /// Counts `channel` until it closes.
    func opened(_ channel: any Channel) {
        state.withLock { $0.open += 1 }
        channel.closeFuture.whenComplete { _ in self.closed() }
    }

    private func closed() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open -= 1
            guard state.open == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no connection is open (or the task is cancelled).
    func drained() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.open > 0, !state.released else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.released = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    func run() async throws {
        // Nothing to do until the shutdown reaches this service (cancellation ends it at once).
        guard (try? await gracefulShutdown()) != nil else { return }
        await drained()
    }
}
