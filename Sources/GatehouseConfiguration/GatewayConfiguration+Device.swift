import GatehouseCore

extension GatewayConfiguration {
    /// `device:` — device sign-in for command-line clients (RFC 8628's shape): `/v1/device/…`.
    public struct Device: Sendable, Equatable {
        /// Whether `/v1/device/…` answers at all; off, every device route is 404.
        public var enabled: Bool
        /// How long a device code and its user code stay valid.
        public var codeLifetimeSeconds: Int
        /// The least number of seconds between two polls of `POST /v1/device/token`.
        public var intervalSeconds: Int

        /// - Parameters:
        ///   - enabled: true by default.
        ///   - codeLifetimeSeconds: 600 by default.
        ///   - intervalSeconds: 5 by default.
        public init(enabled: Bool = true, codeLifetimeSeconds: Int = 600, intervalSeconds: Int = 5) {
            self.enabled = enabled
            self.codeLifetimeSeconds = codeLifetimeSeconds
            self.intervalSeconds = intervalSeconds
        }

        init(_ map: ConfigMap) throws {
            self.init()
            enabled = try map.bool("enabled") ?? enabled
            codeLifetimeSeconds = try map.positiveInt("code_lifetime_seconds", unit: "seconds") ?? codeLifetimeSeconds
            intervalSeconds = try map.positiveInt("interval_seconds", unit: "seconds") ?? intervalSeconds
            try map.finish()
        }
    }
}
