import Logging
import Synchronization

/// The log handler PostgresNIO's pool writes to: passes everything on to the store's log, and reports
/// each failed connection attempt as it happens.
///
/// The pool keeps a call that waits for a connection queued while its attempts fail (refused, closed
/// during start-up), for up to 15 s, and tells of the failures only in its log. A refusal is known at
/// once; this is how the store hears of it, and opens its breaker, instead of waiting for the call's
/// deadline. Connect timeouts are not reported: a slow connect is not a refusal, and the store's
/// silence rule (``StoreLiveness``) decides those.
struct PostgresPoolLogTap: LogHandler {
    /// Where failed attempts are reported (set once the store exists).
    final class Listener: Sendable {
        private let handler = Mutex<(@Sendable (String) -> Void)?>(nil)

        func set(_ body: @escaping @Sendable (String) -> Void) { handler.withLock { $0 = body } }

        func connectFailed(_ reason: String) {
            let body = handler.withLock { $0 }
            body?(reason)
        }
    }

    /// PostgresNIO's message for a failed attempt (`PostgresClientMetrics.connectFailed`).
    static let connectFailedMessage = "Connection creation failed"

    private var base: any LogHandler
    private let listener: Listener

    init(base: any LogHandler, listener: Listener) {
        self.base = base
        self.listener = listener
    }

    /// The pool logs failed attempts at `info`: hear them even when the store's log shows only warnings.
    var logLevel: Logger.Level {
        get { min(base.logLevel, .info) }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if event.message.description == Self.connectFailedMessage {
            let error = event.metadata?["psql_error"]?.description ?? "unknown error"
            if !error.contains("connectTimeout") { listener.connectFailed("cannot connect: \(error)") }
            // The store's outage lines speak for these (one when it goes down, a count every 10 s, one when it is
            // back: ``StoreOutageReporter``); the pool's own line for every reconnect attempt is for `debug`.
            event.level = .debug
        }
        if event.level >= base.logLevel { base.log(event: event) }
    }
}
