import GatehouseCore

extension GatewayConfiguration {
    /// `cors:` — browser origins allowed to call the API cross-origin.
    public struct CORS: Sendable, Equatable {
        /// Exact origins (`https://app.example.com`, no path); empty allows none.
        public var allowedOrigins: [String]

        /// - Parameter allowedOrigins: none by default.
        public init(allowedOrigins: [String] = []) {
            self.allowedOrigins = allowedOrigins
        }

        init(_ map: ConfigMap) throws {
            self.init()
            for entry in try map.locatedStrings("allowed_origins") ?? [] {
                guard WebOrigin.isOrigin(entry.value) else {
                    throw ConfigError(
                        at: entry.node, "'\(map.qualified("allowed_origins"))' entry '\(entry.value)' must be an origin like https://app.example.com")
                }
                allowedOrigins.append(entry.value)
            }
            try map.finish()
        }
    }
}
