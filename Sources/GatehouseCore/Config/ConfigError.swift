/// A configuration problem, printed as `file:line: what is wrong`.
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public init(at node: ConfigNode, _ message: String) {
        self.init(file: node.file, line: node.line, message: message)
    }

    public var description: String { "\(file):\(line): \(message)" }
}
