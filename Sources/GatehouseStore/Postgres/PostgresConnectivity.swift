import GatehouseCore
import PostgresNIO

/// Which errors of PostgresNIO mean "PostgreSQL cannot be reached" (503 `store_unavailable`, the breaker
/// opens at once) rather than a statement failing on a store that answers.
enum PostgresConnectivity {
    /// Why `error` is a connectivity fault (for logs), or nil when the store answered.
    ///
    /// Call it only when the caller's task is not cancelled: a cancelled lease looks like a dropped one.
    static func fault(in error: any Error) -> String? {
        switch error {
        case let error as StoreUnavailableError:
            return error.reason
        case let error as PSQLError:
            return fault(in: error)
        // `withTransaction` wraps what failed: BEGIN, the body or COMMIT (a failed ROLLBACK follows one of them).
        case let error as PostgresTransactionError:
            return (error.beginError ?? error.closureError ?? error.commitError).flatMap { fault(in: $0) }
        // A write on a connection the server just closed can surface as NIO's own error, unwrapped.
        case let error as ChannelError:
            return "connection: \(error)"
        case let error as IOError:
            return "connection: \(error)"
        case let error as NIOConnectionError:
            return "cannot connect: \(error)"
        case is CancellationError:
            return "cancelled"
        default:
            // The pool's own errors (its circuit breaker tripped, it shut down) are not PSQLErrors, and their
            // module is not a product this package depends on: known by the type's name.
            return String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError") ? "connection pool: \(error)" : nil
        }
    }

    private static func fault(in error: PSQLError) -> String? {
        guard error.code == .server else {
            // Everything but a server answer is the connection failing: refused, closed, TLS, timeout, pool
            // closed; only these two are mistakes in the statement.
            if error.code == .tooManyParameters || error.code == .invalidCommandTag { return nil }
            return "\(error.code)"
        }
        // Class 08 (connection exception), 57P01–57P03 (shutdown, cannot connect now), 53 (insufficient resources).
        let state = error.serverInfo?[.sqlState] ?? ""
        guard state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53") else { return nil }
        return "server: SQLSTATE \(state)"
    }
}
