import GatehouseCore

extension GatewayConfiguration {
    /// `logging:` — level, line format and the access log.
    public struct Logging: Sendable, Equatable {
        /// Log levels; the raw values are swift-log's `Logger.Level` raw values.
        public enum Level: String, Sendable, CaseIterable {
            case trace, debug, info, notice, warning, error, critical
        }

        /// Line format.
        public enum Format: String, Sendable, CaseIterable {
            /// Human-readable lines.
            case text
            /// One JSON object per line.
            case json
        }

        public var level: Level
        public var format: Format
        /// One `info` line per request (method, route, status, duration, provider, session id, request id).
        public var accessLog: Bool

        /// - Parameters:
        ///   - level: `info` by default.
        ///   - format: `text` by default.
        ///   - accessLog: on by default.
        public init(level: Level = .info, format: Format = .text, accessLog: Bool = true) {
            self.level = level
            self.format = format
            self.accessLog = accessLog
        }

        init(_ map: ConfigMap) throws {
            self.init()
            if let text = try map.choice("level", Level.allCases.map(\.rawValue)), let value = Level(rawValue: text) {
                level = value
            }
            if let text = try map.choice("format", Format.allCases.map(\.rawValue)), let value = Format(rawValue: text) {
                format = value
            }
            accessLog = try map.bool("access_log") ?? accessLog
            try map.finish()
        }
    }
}
