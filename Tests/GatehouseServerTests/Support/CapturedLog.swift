import Logging
import Synchronization

/// The lines a ``Logger`` wrote, kept in memory: `logger` writes here.
final class CapturedLog: Sendable {
    /// One line: its level, message and metadata.
    struct Line: Sendable, Equatable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let captured = Mutex<[Line]>([])

    /// A logger whose every line (from `trace` up) is kept here.
    var logger: Logger {
        var logger = Logger(label: "captured") { _ in Handler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The lines so far.
    var lines: [Line] { captured.withLock { $0 } }

    fileprivate func append(_ line: Line) {
        captured.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var fields: [String: String] = [:]
            for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { fields[key] = "\(value)" }
            log.append(Line(level: event.level, message: "\(event.message)", metadata: fields))
        }
    }
}
