import GatehouseCore

extension GatewayConfiguration {
    /// `keys:` — sealing keys for credentials at rest and signing keys for `X-Gatehouse-Assertion`.
    ///
    /// The first key of each list seals or signs; all of them open or verify, so keys rotate without logging
    /// everyone out. Empty lists mean "generate under ./data on first start".
    public struct Keys: Sendable, Equatable {
        public var sealing: [KeyReference]
        public var signing: [KeyReference]

        /// - Parameters:
        ///   - sealing: AES-GCM keys, newest first.
        ///   - signing: assertion signing keys, newest first.
        public init(sealing: [KeyReference] = [], signing: [KeyReference] = []) {
            self.sealing = sealing
            self.signing = signing
        }

        init(_ map: ConfigMap, baseDirectory: String) throws {
            self.init()
            sealing = try Self.read("sealing", in: map, baseDirectory: baseDirectory)
            signing = try Self.read("signing", in: map, baseDirectory: baseDirectory)
            try map.finish()
        }

        private static func read(_ key: String, in map: ConfigMap, baseDirectory: String) throws -> [KeyReference] {
            var references: [KeyReference] = []
            var ids: Set<String> = []
            for entry in try map.maps(key) {
                let id = try entry.requiredString("id")
                guard ids.insert(id).inserted else {
                    throw entry.error("id", "'\(entry.qualified("id"))': duplicate key id '\(id)' in '\(map.qualified(key))'")
                }
                let file = try entry.requiredString("file")
                try entry.finish()
                references.append(
                    KeyReference(
                        id: id, file: ConfigPath.resolve(file, against: baseDirectory),
                        sourceFile: entry.file, sourceLine: entry.node.line))
            }
            return references
        }
    }
}
