import GatehouseCore

extension GatewayConfiguration {
    /// `sessions:` — lifetimes and the browser cookie.
    public struct Sessions: Sendable, Equatable {
        /// A session unused this long expires.
        public var idleTimeoutSeconds: Int
        /// A session expires this long after creation, however busy.
        public var absoluteLifetimeSeconds: Int
        public var cookie: Cookie

        /// - Parameters:
        ///   - idleTimeoutSeconds: 3600 by default.
        ///   - absoluteLifetimeSeconds: 86400 by default.
        ///   - cookie: the browser session cookie.
        public init(idleTimeoutSeconds: Int = 3600, absoluteLifetimeSeconds: Int = 86400, cookie: Cookie = Cookie()) {
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.absoluteLifetimeSeconds = absoluteLifetimeSeconds
            self.cookie = cookie
        }

        init(_ map: ConfigMap) throws {
            self.init()
            idleTimeoutSeconds = try map.positiveInt("idle_timeout_seconds", unit: "seconds") ?? idleTimeoutSeconds
            absoluteLifetimeSeconds = try map.positiveInt("absolute_lifetime_seconds", unit: "seconds") ?? absoluteLifetimeSeconds
            cookie = try Cookie(map.mapOrEmpty("cookie"))
            try map.finish()
        }
    }
}
