import Synchronization

/// The first of a call's contenders to finish (its work, or its watchdog's verdict), without waiting for
/// the other: the loser is cancelled and left to end by itself.
///
/// A task group would wait for both, and a statement PostgresNIO writes to a connection the server has
/// just closed can wait forever (nothing completes it; closing the connection again does not help). A
/// call must not wait with it.
final class CallRace<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        /// The result, once known (cancellation can come before the race has started).
        var result: Result<Value, any Error>?
        var contenders: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    private init() {}

    /// The value or error of whichever of `contenders` finishes first; `CancellationError` when the
    /// calling task is cancelled first.
    static func first(_ contenders: [@Sendable () async throws -> Value]) async throws -> Value {
        let race = CallRace()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation, contenders)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    private func start(_ continuation: CheckedContinuation<Value, any Error>, _ contenders: [@Sendable () async throws -> Value]) {
        let decided: Result<Value, any Error>? = state.withLock { state in
            if let result = state.result { return result }
            state.continuation = continuation
            state.contenders = contenders.map { contender in
                Task { [self] in
                    do {
                        finish(.success(try await contender()))
                    } catch {
                        finish(.failure(error))
                    }
                }
            }
            return nil
        }
        if let decided { continuation.resume(with: decided) }
    }

    private func finish(_ result: Result<Value, any Error>) {
        let (continuation, losers) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, [Task<Void, Never>]) in
            guard case .none = state.result else { return (nil, []) }
            state.result = result
            defer {
                state.continuation = nil
                state.contenders = []
            }
            return (state.continuation, state.contenders)
        }
        for loser in losers { loser.cancel() }
        continuation?.resume(with: result)
    }
}
