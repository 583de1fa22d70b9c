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

    public init(_ value: Value, file: String, line: Int) {
        self.value = value
        self.file = file
        self.line = line
    }

    /// An empty mapping, used where a whole file or section is absent.
    public static func emptyMapping(file: String) -> ConfigNode {
        ConfigNode(.mapping([]), file: file, line: 1)
    }
}
