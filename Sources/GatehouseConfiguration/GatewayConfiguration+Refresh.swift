import GatehouseCore

extension GatewayConfiguration {
    /// `refresh:` — transparent refresh of provider credentials.
    public struct Refresh: Sendable, Equatable {
        /// A credential expiring within this many seconds is refreshed before proxying (capped at half its lifetime).
        public var skewSeconds: Int
        /// Request bodies up to this size are kept so a request can be replayed after a 401 and a refresh.
        public var replayLimitBytes: Int

        /// - Parameters:
        ///   - skewSeconds: 30 by default.
        ///   - replayLimitBytes: 1 MiB by default.
        public init(skewSeconds: Int = 30, replayLimitBytes: Int = 1_048_576) {
            self.skewSeconds = skewSeconds
            self.replayLimitBytes = replayLimitBytes
        }

        init(_ map: ConfigMap) throws {
            self.init()
            skewSeconds = try map.nonNegativeInt("skew_seconds", unit: "seconds") ?? skewSeconds
            replayLimitBytes = try map.nonNegativeInt("replay_limit_bytes", unit: "bytes") ?? replayLimitBytes
            try map.finish()
        }
    }
}
