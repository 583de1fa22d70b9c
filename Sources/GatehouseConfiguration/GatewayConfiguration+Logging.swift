import GatehouseCore

extension GatewayConfiguration {
    /// `logging:` — level and line format.
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

        /// - Parameters:
        ///   - level: `info` by default.
        ///   - format: `text` by default.
        public init(level: Level = .info, format: Format = .text) {
            self.level = level
            self.format = format
        }

        init(_ map: ConfigMap) throws {
            self.init()
            if let text = try map.choice("level", Level.allCases.map(\.rawValue)), let value = Level(rawValue: text) {
                level = value
            }
            if let text = try map.choice("format", Format.allCases.map(\.rawValue)), let value = Format(rawValue: text) {
                format = value
            }
            try map.finish()
        }
    }
}
