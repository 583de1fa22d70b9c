import GatehouseCore

/// Gathers problems so one run reports all of them, not just the first.
struct ErrorCollector {
    private(set) var errors: [ConfigError] = []

    var isEmpty: Bool { errors.isEmpty }

    /// Runs `body`; on failure records the problem and returns `fallback`.
    mutating func run<T>(file: String, _ fallback: T, _ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            record(error, file: file)
            return fallback
        }
    }

    /// Runs `body`; on failure records the problem and returns nil.
    mutating func attempt<T>(file: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            record(error, file: file)
            return nil
        }
    }

    mutating func append(_ error: ConfigError) {
        errors.append(error)
    }

    /// Records any error; one that carries no location is placed at the top of `file`.
    mutating func record(_ error: any Error, file: String) {
        switch error {
        case let error as ConfigError: errors.append(error)
        case let error as ConfigurationErrors: errors.append(contentsOf: error.errors)
        case let error as ConfigErrorList: errors.append(contentsOf: error.errors)
        default: errors.append(ConfigError(file: file, line: 1, message: String(describing: error)))
        }
    }

    /// The problems ordered by line, keeping the order of problems on the same line.
    func sortedByLine() -> [ConfigError] {
        errors.enumerated()
            .sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            .map(\.element)
    }
}
