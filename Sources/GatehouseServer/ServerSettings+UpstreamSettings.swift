public import GatehouseConfiguration

extension ServerSettings {
    /// One named upstream of `upstreams:`: `/v1/api{prefix}/…` goes there instead of ``ServerSettings/backend``.
    /// A view of ``GatewayConfiguration/Upstream``.
    public struct UpstreamSettings: Sendable {
        /// What this is a view of.
        public var configuration: GatewayConfiguration.Upstream

        public init(_ configuration: GatewayConfiguration.Upstream) {
            self.configuration = configuration
        }

        public init(name: String, prefix: String, keepPrefix: Bool = false, backend: BackendSettings) {
            self.init(GatewayConfiguration.Upstream(name: name, prefix: prefix, keepPrefix: keepPrefix, backend: backend.configuration))
        }

        /// Its label in the access log and the metrics.
        public var name: String { configuration.name }
        /// A whole-segment path prefix under `/v1/api`, like `/billing`.
        public var prefix: String { configuration.prefix }
        /// Whether the prefix stays on the forwarded path.
        public var keepPrefix: Bool { configuration.keepPrefix }
        /// Where it is and what it receives (its `audience` included).
        public var backend: BackendSettings { BackendSettings(configuration.backend) }
    }
}
