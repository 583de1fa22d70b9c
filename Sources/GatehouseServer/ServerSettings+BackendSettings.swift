public import Foundation
public import GatehouseConfiguration

extension ServerSettings {
    /// A backend (`backend:`, or the one of an entry of `upstreams:`) as the server reads it: a view of
    /// ``GatewayConfiguration/Backend``.
    public struct BackendSettings: Sendable {
        /// What this is a view of.
        public var configuration: GatewayConfiguration.Backend

        /// - Parameter configuration: every key at its default unless given.
        public init(_ configuration: GatewayConfiguration.Backend = GatewayConfiguration.Backend()) {
            self.configuration = configuration
        }

        /// Base URL without trailing slash: `/v1/api/{path}` goes to `{url}/{path}`.
        public var url: String {
            get { configuration.url }
            set { configuration.url = newValue }
        }
        /// `aud` of `X-Gatehouse-Assertion`.
        public var audience: String {
            get { configuration.audience }
            set { configuration.audience = newValue }
        }
        /// Whether `X-Gatehouse-Provider`, `-Subject` and `-Email` are sent.
        public var identityHeaders: Bool {
            get { configuration.identityHeaders }
            set { configuration.identityHeaders = newValue }
        }
        /// Whether the signed `X-Gatehouse-Assertion` is sent.
        public var assertion: Bool {
            get { configuration.assertion }
            set { configuration.assertion = newValue }
        }
        /// Whether the fresh provider access token is forwarded (opt-in).
        public var forwardAccessToken: Bool {
            get { configuration.forwardAccessToken }
            set { configuration.forwardAccessToken = newValue }
        }
        /// How long it may take to start its answer; `nil`: ``ServerSettings/upstreamTimeout``.
        public var timeout: TimeInterval? {
            get { configuration.timeoutSeconds.map(TimeInterval.init) }
            set { configuration.timeoutSeconds = newValue.map(ServerSettings.seconds) }
        }
    }
}
