public import GatehouseCore

extension GatewayConfiguration {
    /// `sessions:` — lifetimes, the browser cookie and key binding (DPoP).
    public struct Sessions: Sendable, Equatable {
        /// A session unused this long expires.
        public var idleTimeoutSeconds: Int
        /// A session expires this long after creation, however busy.
        public var absoluteLifetimeSeconds: Int
        public var cookie: Cookie
        /// `sessions.dpop:`.
        public var dpop: DPoPPolicy

        /// - Parameters:
        ///   - idleTimeoutSeconds: 3600 by default.
        ///   - absoluteLifetimeSeconds: 86400 by default.
        ///   - cookie: the browser session cookie.
        ///   - dpop: when sessions are bound to a client key.
        public init(idleTimeoutSeconds: Int = 3600, absoluteLifetimeSeconds: Int = 86400, cookie: Cookie = Cookie(), dpop: DPoPPolicy = DPoPPolicy())
        {
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.absoluteLifetimeSeconds = absoluteLifetimeSeconds
            self.cookie = cookie
            self.dpop = dpop
        }

        init(_ map: ConfigMap) throws {
            self.init()
            idleTimeoutSeconds = try map.positiveInt("idle_timeout_seconds", unit: "seconds") ?? idleTimeoutSeconds
            absoluteLifetimeSeconds = try map.positiveInt("absolute_lifetime_seconds", unit: "seconds") ?? absoluteLifetimeSeconds
            cookie = try Cookie(map.mapOrEmpty("cookie"))
            dpop = try DPoPPolicy(map.mapOrEmpty("dpop"))
            try map.finish()
        }
    }
}
