/// A configuration problem, printed as `file:line: what is wrong`, or `NAME: what is wrong` for a value given by
/// the environment variable `NAME` (``line`` 0, ``file`` the variable's name; see ``ConfigNode/environment(_:variable:implicitType:)``).
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var message: String
    /// Set when the problem is an environment variable the file references (`${NAME}`) that is not set:
    /// a provider file marked `optional: true` is then skipped instead of refused.
    public var unsetVariable: String?

    public init(file: String, line: Int, message: String, unsetVariable: String? = nil) {
        self.file = file
        self.line = line
        self.message = message
        self.unsetVariable = unsetVariable
    }

    public init(at node: ConfigNode, _ message: String) {
        self.init(file: node.file, line: node.line, message: message)
    }

    /// A problem with a value from the environment: `NAME: what is wrong`.
    /// - Parameters:
    ///   - variable: the variable's name.
    ///   - message: what is wrong; never the variable's value when it may be a secret.
    public init(variable: String, message: String) {
        self.init(file: variable, line: 0, message: message)
    }

    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
