import GatehouseCore

extension GatewayConfiguration {
    /// `outbound_tls:` — what every outbound call (providers, upstreams) trusts besides a provider's or an
    /// upstream's own `tls.ca_file`.
    public struct OutboundTLS: Sendable, Equatable {
        /// `ca_files`: PEM bundles of certificate authorities added to the trust (absolute once loaded).
        public var caFiles: [String]
        /// `system_roots`: whether the system's trust store is trusted too (default true).
        public var systemRoots: Bool

        /// - Parameters:
        ///   - caFiles: none by default.
        ///   - systemRoots: true by default.
        public init(caFiles: [String] = [], systemRoots: Bool = true) {
            self.caFiles = caFiles
            self.systemRoots = systemRoots
        }

        /// Reads `outbound_tls:`; each file of `ca_files` is read and checked at its own line.
        init(_ map: ConfigMap) throws {
            self.init()
            if let entries = try map.locatedStrings("ca_files") {
                for (index, entry) in entries.enumerated() {
                    let file = map.resolve(entry.value)
                    caFiles.append(file)
                    do {
                        _ = try CertificateBundle.load(file: file)
                    } catch {
                        try map.report(ConfigError(at: entry.node, "'\(map.qualified("ca_files"))[\(index)]': \(error)"), key: "ca_files[\(index)]")
                    }
                }
            }
            systemRoots = try map.bool("system_roots") ?? systemRoots
            try map.finish()
        }
    }
}
