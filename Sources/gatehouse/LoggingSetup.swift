import GatehouseConfiguration
import Logging

/// The process logger, at the configured level and format (`text` or `json`).
enum LoggingSetup {
    static func logger(_ configuration: GatewayConfiguration.Logging) -> Logger {
        let level = Logger.Level(rawValue: configuration.level.rawValue) ?? .info
        var logger: Logger
        switch configuration.format {
        case .json: logger = Logger(label: "gatehouse") { JSONLogHandler(label: $0) }
        case .text: logger = Logger(label: "gatehouse")
        }
        logger.logLevel = level
        return logger
    }
}
