public import GatehouseConfiguration

extension ServerSettings {
    /// The session cookie (`sessions.cookie`): a view of ``GatewayConfiguration/Cookie``.
    public struct CookieSettings: Sendable {
        /// What this is a view of.
        public var configuration: GatewayConfiguration.Cookie

        public init(_ configuration: GatewayConfiguration.Cookie = GatewayConfiguration.Cookie()) {
            self.configuration = configuration
        }

        /// `__Host-gatehouse_session` by default.
        public var name: String {
            get { configuration.name }
            set { configuration.name = newValue }
        }
        /// Whether it carries `Secure`.
        public var secure: Bool {
            get { configuration.secure }
            set { configuration.secure = newValue }
        }
        /// `SameSite`: `Strict`, `Lax` or `None`.
        public var sameSite: String { configuration.sameSite.rawValue }
    }
}
