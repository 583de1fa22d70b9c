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
    /// The file the node was read from.
    public var file: String
    /// 1-based line of the node in ``file``.
    public var line: Int
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

    /// An empty mapping, used where a whole file or section is absent.
    public static func emptyMapping(file: String) -> ConfigNode {
        ConfigNode(.mapping([]), file: file, line: 1)
    }
}
