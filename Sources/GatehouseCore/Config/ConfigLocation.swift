/// Where a setting was given: a file and line, or an environment variable (``line`` 0, ``file`` its name), so
/// that a problem found later (a directory that cannot be written) is reported where the setting is.
public struct ConfigLocation: Sendable, Equatable {
    /// The file, or the variable's name.
    public var file: String
    /// 1-based line in ``file``; 0 for an environment variable.
    public var line: Int

    /// - Parameters:
    ///   - file: the file, or the variable's name.
    ///   - line: the line; 0 for a variable.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// Where `node` was read.
    public init(_ node: ConfigNode) {
        self.init(file: node.file, line: node.line)
    }

    /// A problem at this location, printed `file:line: message` (`NAME: message` for a variable).
    public func error(_ message: String) -> ConfigError {
        ConfigError(file: file, line: line, message: message)
    }
}
