/// A parsed configuration value that remembers where it came from, so every error can name `file:line`.
///
/// The YAML loader (module `GatehouseConfiguration`) produces these; adapters read their own keys from a
/// ``ConfigMap`` over them and never see YAML.
public struct ConfigNode: Sendable {
    /// The shape of a node.
    public enum Value: Sendable {
        case null
        case scalar(String)
        case sequence([ConfigNode])
        /// Keys keep their own line so that an unknown key is reported where it is written.
        case mapping([Entry])
    }

    /// One `key: value` pair of a mapping.
    public struct Entry: Sendable {
        public var key: String
        public var line: Int
        public var value: ConfigNode
        public init(key: String, line: Int, value: ConfigNode) {
            self.key = key
            self.line = line
            self.value = value
        }
    }

    public var value: Value
    /// The file the node was read from; for a value from the environment, the variable's name.
    public var file: String
    /// 1-based line of the node in ``file``; 0 for a value from the environment.
    public var line: Int
    /// The environment variable that gave this value instead of a file (`GATEHOUSE_STORE_KIND`), nil for a value
    /// read from a file. Such a value is taken as it is: no `${NAME}` expansion, no quoting to ask for (a variable
    /// has none), and a secret in it is not "written inline" (it is not in a committed file). Its problems are
    /// printed as `GATEHOUSE_STORE_KIND: what is wrong`.
    public var variable: String?
    /// What YAML reads an unquoted scalar as when it is not a string (`42`, `1.5`, `true`): a key that wants
    /// a string refuses it, so that `client_id: 42` is caught instead of silently becoming "42".
    public var implicitType: ImplicitType?

    /// The non-string types of an unquoted YAML scalar.
    public enum ImplicitType: String, Sendable {
        case number = "a number"
        case boolean = "a boolean"
    }

    public init(_ value: Value, file: String, line: Int, implicitType: ImplicitType? = nil) {
        self.value = value
        self.file = file
        self.line = line
        self.implicitType = implicitType
    }

    /// A value given by an environment variable: located at the variable (``file`` is its name, ``line`` 0).
    /// - Parameters:
    ///   - value: the value as the configuration reads it.
    ///   - variable: the variable's name, e.g. `GATEHOUSE_STORE_KIND`.
    ///   - implicitType: what YAML would read the text as, unquoted.
    public static func environment(_ value: Value, variable: String, implicitType: ImplicitType? = nil) -> ConfigNode {
        var node = ConfigNode(value, file: variable, line: 0, implicitType: implicitType)
        node.variable = variable
        return node
    }

    /// An empty mapping, used where a whole file or section is absent.
    public static func emptyMapping(file: String) -> ConfigNode {
        ConfigNode(.mapping([]), file: file, line: 1)
    }
}
