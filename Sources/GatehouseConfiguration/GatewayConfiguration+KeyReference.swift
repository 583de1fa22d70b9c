public import GatehouseCore

extension GatewayConfiguration {
    /// One key of `keys.sealing` or `keys.signing`: an id and the file holding the key.
    public struct KeyReference: Sendable, Equatable {
        /// Key id, stored with sealed data (sealing) or sent as `kid` (signing).
        public var id: String
        /// Absolute path of the key file (resolved against the configuration file's directory).
        public var file: String
        /// The configuration file that named the key, for messages (empty when built in code).
        public var sourceFile: String
        /// The line that named the key.
        public var sourceLine: Int

        /// - Parameters:
        ///   - id: key id.
        ///   - file: key file path.
        ///   - sourceFile: configuration file that named the key.
        ///   - sourceLine: line in that file.
        public init(id: String, file: String, sourceFile: String = "", sourceLine: Int = 0) {
            self.id = id
            self.file = file
            self.sourceFile = sourceFile
            self.sourceLine = sourceLine
        }

        /// A problem with this key (unreadable file, bad format), reported at the line that named it.
        public func error(_ message: String) -> ConfigError {
            ConfigError(file: sourceFile, line: sourceLine, message: message)
        }
    }
}
