import GatehouseServer
import Logging

/// `logging.format: json`: one JSON object per line on standard error, rendered as the access log's lines
/// are (``LogLineFormat/json``).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new })
        let fields = merged.map { ($0.key, $0.value.description) }.sorted { $0.0 < $1.0 }
        var line: [UInt8] = []
        LogLineFormat.json.render(
            time: LogTime.now(), level: event.level.rawValue, label: label, source: event.source,
            message: event.message.description, fields: fields, into: &line)
        LogOutput.write(line)
    }
}
