import Glibc

/// How a log line looks on standard error (`logging.format`): the process's log handlers and the access
/// log's own writer (``AccessLogWriter``) render lines the same way.
public enum LogLineFormat: Sendable {
    /// swift-log's `StreamLogHandler`: `2026-11-26T20:01:02+0000 info gatehouse: k=v … [Module] message`.
    case text
    /// One JSON object per line, keys sorted, every value a string (`time` RFC 3339 UTC with milliseconds).
    case json

    /// One line, with its newline, appended to `output`.
    /// - Parameter fields: the metadata, sorted by name.
    public func render(
        time: LogTime, level: String, label: String, source: String, message: String, fields: [(String, String)], into output: inout [UInt8]
    ) {
        switch self {
        case .text:
            output.append(contentsOf: Self.localTimestamp(time).utf8)
            output.append(contentsOf: " \(level) \(label):".utf8)
            for (name, value) in fields {
                output.append(0x20)
                output.append(contentsOf: name.utf8)
                output.append(UInt8(ascii: "="))
                output.append(contentsOf: value.utf8)
            }
            output.append(contentsOf: " [\(source)] \(message)\n".utf8)
        case .json:
            var object = fields
            object.append(contentsOf: [
                ("label", label), ("level", level), ("message", message), ("source", source), ("time", Self.utcTimestamp(time)),
            ])
            // JSONEncoder's `.sortedKeys` order: by code point.
            object.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
            output.append(UInt8(ascii: "{"))
            for (index, (name, value)) in object.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.appendJSONString(name, to: &output)
                output.append(UInt8(ascii: ":"))
                Self.appendJSONString(value, to: &output)
            }
            output.append(contentsOf: "}\n".utf8)
        }
    }

    /// `time` in UTC as RFC 3339 with milliseconds, `2026-11-25T22:00:18.085Z`.
    public static func utcTimestamp(_ time: LogTime) -> String {
        var seconds = time_t(time.seconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2))"
            + "T\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2))"
            + ".\(padded(Int32(time.milliseconds), 3))Z"
    }

    /// `time` in local time as `StreamLogHandler` writes it, `2026-11-25T22:00:18+0000`.
    public static func localTimestamp(_ time: LogTime) -> String {
        var seconds = time_t(time.seconds)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func padded(_ value: Int32, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// A JSON string as JSONEncoder with `.withoutEscapingSlashes` writes it.
    private static func appendJSONString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
