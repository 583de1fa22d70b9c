/// Several configuration problems found at once in one mapping, each printed as `file:line: what is wrong`.
///
/// A ``ProviderKind`` throws it when one check finds more than one problem in its provider file (every
/// `http://` URL that would carry a secret, not just the first); the configuration loader lists each.
public struct ConfigErrorList: Error, Sendable, CustomStringConvertible, Equatable {
    /// The problems, in the order they were found.
    public var errors: [ConfigError]

    /// - Parameter errors: the problems; normally not empty.
    public init(_ errors: [ConfigError]) {
        self.errors = errors
    }

    /// One problem per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
