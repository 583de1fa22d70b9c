public import GatehouseConfiguration

extension ServerSettings {
    /// One named upstream of `upstreams:` (`/v1/api{prefix}/…` goes there instead of ``ServerSettings/backend``):
    /// the configuration's own type.
    public typealias UpstreamSettings = GatewayConfiguration.Upstream
}
