/// A configuration problem, printed as `file:line: what is wrong`.
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

    public var description: String { "\(file):\(line): \(message)" }
}
