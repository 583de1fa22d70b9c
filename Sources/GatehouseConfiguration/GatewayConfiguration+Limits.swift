import GatehouseCore

extension GatewayConfiguration {
    /// `limits:` — request sizes and upstream patience.
    public struct Limits: Sendable, Equatable {
        /// Largest request body accepted.
        public var maxBodyBytes: Int
        /// Largest request header section accepted.
        public var maxHeaderBytes: Int
        /// How long an upstream (backend, provider API, provider endpoints) may take.
        public var upstreamTimeoutSeconds: Int

        /// - Parameters:
        ///   - maxBodyBytes: 10 MiB by default.
        ///   - maxHeaderBytes: 16384 by default.
        ///   - upstreamTimeoutSeconds: 30 by default.
        public init(maxBodyBytes: Int = 10_485_760, maxHeaderBytes: Int = 16384, upstreamTimeoutSeconds: Int = 30) {
            self.maxBodyBytes = maxBodyBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.upstreamTimeoutSeconds = upstreamTimeoutSeconds
        }

        init(_ map: ConfigMap) throws {
            self.init()
            maxBodyBytes = try map.positiveInt("max_body_bytes", unit: "bytes") ?? maxBodyBytes
            maxHeaderBytes = try map.positiveInt("max_header_bytes", unit: "bytes") ?? maxHeaderBytes
            upstreamTimeoutSeconds = try map.positiveInt("upstream_timeout_seconds", unit: "seconds") ?? upstreamTimeoutSeconds
            try map.finish()
        }
    }
}
