public import GatehouseConfiguration

extension ServerSettings {
    /// The session cookie (`sessions.cookie`): the configuration's own type.
    public typealias CookieSettings = GatewayConfiguration.Cookie
}
