public import Foundation
public import GatehouseConfiguration

extension ServerSettings {
    /// A backend (`backend:`, or the one of an entry of `upstreams:`): the configuration's own type.
    public typealias BackendSettings = GatewayConfiguration.Backend
}

extension GatewayConfiguration.Backend {
    /// How long it may take to start its answer, as the server counts time; `nil`: ``ServerSettings/upstreamTimeout``.
    public var timeout: TimeInterval? {
        get { timeoutSeconds.map(TimeInterval.init) }
        set { timeoutSeconds = newValue.map(ServerSettings.seconds) }
    }
}
