import GatehouseCore

/// Hand-built configuration nodes, as the YAML loader would produce them, with explicit lines.
enum Nodes {
    static let file = "Providers/example.yaml"

    static func scalar(_ text: String, line: Int) -> ConfigNode {
        ConfigNode(.scalar(text), file: file, line: line)
    }

    static func null(line: Int) -> ConfigNode {
        ConfigNode(.null, file: file, line: line)
    }

    static func sequence(_ items: [String], line: Int) -> ConfigNode {
        ConfigNode(.sequence(items.enumerated().map { scalar($1, line: line + 1 + $0) }), file: file, line: line)
    }

    /// A mapping starting at `line`; each entry is `(key, line, value)`.
    static func mapping(_ entries: [(String, Int, ConfigNode)], line: Int = 1) -> ConfigNode {
        ConfigNode(.mapping(entries.map { ConfigNode.Entry(key: $0.0, line: $0.1, value: $0.2) }), file: file, line: line)
    }

    /// A mapping of scalars, one per line starting at `firstLine`.
    static func scalars(_ pairs: [(String, String)], firstLine: Int = 1) -> ConfigNode {
        mapping(pairs.enumerated().map { index, pair in (pair.0, firstLine + index, scalar(pair.1, line: firstLine + index)) }, line: firstLine)
    }
}
