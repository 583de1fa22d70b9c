public import GatehouseCore

/// Every problem found in a set of configuration files, each printed as `file:line: what is wrong`.
///
/// Loading collects problems across sections and files instead of stopping at the first, so
/// `gatehouse check` can print them all at once.
public struct ConfigurationErrors: Error, Sendable, CustomStringConvertible, Equatable {
    /// The problems in the order they were found (files in name order, lines top to bottom per section).
    public var errors: [ConfigError]

    /// - Parameter errors: the problems; normally not empty.
    public init(_ errors: [ConfigError]) {
        self.errors = errors
    }

    /// One problem per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }

    /// The messages as printed, one string per problem.
    public var lines: [String] { errors.map(\.description) }
}
