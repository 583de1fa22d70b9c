import Foundation
import Logging

/// `logging.format: json`: one JSON object per line on standard error.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: String] = [
            "time": Self.timestamp(),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
            "source": event.source,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new }) {
            object[key] = value.description
        }
        // JSONEncoder sorts by code point; JSONSerialization and Date.ISO8601FormatStyle go through ICU
        // (collation, calendars), which kept several megabytes of its pages resident from the first line on.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(object) else { return }
        data.append(0x0A)
        FileHandle.standardError.write(data)
    }

    /// Now in UTC as RFC 3339 with milliseconds, `2026-11-25T22:00:18.085Z`.
    static func timestamp(_ now: timespec = Self.now()) -> String {
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))"
            + "T\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2))"
            + ".\(padded(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }

    private static func now() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now
    }
}
