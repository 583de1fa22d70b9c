import Logging

extension Logger {
    /// The stand-ins' default logger: warnings and worse only, to keep test output quiet.
    static func standInQuiet(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return logger
    }
}
