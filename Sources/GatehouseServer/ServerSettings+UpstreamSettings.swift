extension ServerSettings {
    /// One named upstream of `upstreams:`: `/v1/api{prefix}/…` goes there instead of ``ServerSettings/backend``.
    public struct UpstreamSettings: Sendable {
        /// Its label in the access log and the metrics.
        public var name: String
        /// A whole-segment path prefix under `/v1/api`, like `/billing`.
        public var prefix: String
        /// Whether the prefix stays on the forwarded path.
        public var keepPrefix: Bool
        /// Where it is and what it receives (its `audience` included).
        public var backend: BackendSettings

        public init(name: String, prefix: String, keepPrefix: Bool = false, backend: BackendSettings) {
            self.name = name
            self.prefix = prefix
            self.keepPrefix = keepPrefix
            self.backend = backend
        }
    }
}
