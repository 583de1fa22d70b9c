import GatehouseConfiguration
import Logging

/// The process logger, at the configured level.
enum LoggingSetup {
    static func logger(_ configuration: GatewayConfiguration.Logging) -> Logger {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = Logger.Level(rawValue: configuration.level.rawValue) ?? .info
        return logger
    }
}
