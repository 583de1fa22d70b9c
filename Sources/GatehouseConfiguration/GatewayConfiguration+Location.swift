import GatehouseCore

extension GatewayConfiguration {
    /// Where the key at `path` is set in `root`: its node's file and line, or its variable; when it is not set, the
    /// top of `file`, or `fallback` (as a name, line 0) when there is no file.
    static func location(of path: [String], in root: ConfigNode, file: String?, default fallback: String) -> ConfigLocation {
        var node = root
        for key in path {
            guard case .mapping(let entries) = node.value, let entry = entries.first(where: { $0.key == key }) else {
                return file.map { ConfigLocation(file: $0, line: 1) } ?? ConfigLocation(file: fallback, line: 0)
            }
            node = entry.value
        }
        return ConfigLocation(node)
    }
}
