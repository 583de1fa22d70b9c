import PostgresNIO
import Synchronization

/// The pooled connection a call holds, so that a call given up can be ended at once.
///
/// PostgresNIO cannot cancel a statement already sent: on a paused or unreachable server it would wait
/// for an answer forever, and the call with it. Closing the connection fails the statement at once; the
/// pool drops the connection and opens a fresh one when needed.
final class LeasedConnection: Sendable {
    private enum State {
        case waiting
        case holding(PostgresConnection)
        case abandoned
    }

    private let state = Mutex<State>(.waiting)

    /// The call got `connection` from the pool. Throws (and closes it) when the call was given up meanwhile;
    /// throws when the server has closed it already (the pool has not noticed yet), as a statement
    /// written to it would never be answered.
    func hold(_ connection: PostgresConnection) throws {
        if connection.isClosed { throw ChannelError.ioOnClosedChannel }
        let abandoned = state.withLock { state -> Bool in
            if case .abandoned = state { return true }
            state = .holding(connection)
            return false
        }
        if abandoned {
            Self.close(connection)
            throw CancellationError()
        }
    }

    /// The call is done with its connection.
    func release() {
        state.withLock { state in
            if case .holding = state { state = .waiting }
        }
    }

    /// Gives the call up: closes the connection it holds, and any it gets from now on.
    func abandon() {
        let held = state.withLock { state -> PostgresConnection? in
            defer { state = .abandoned }
            if case .holding(let connection) = state { return connection }
            return nil
        }
        if let held { Self.close(held) }
    }

    private static func close(_ connection: PostgresConnection) {
        // Closes the channel without waiting for it, which fails every statement on it at once.
        let _: EventLoopFuture<Void> = connection.close()
    }
}
