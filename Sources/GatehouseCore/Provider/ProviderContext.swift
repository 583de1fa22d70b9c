/// What an adapter gets from the server: a transport to its provider, a clock and where it is mounted.
public struct ProviderContext: Sendable {
    public var transport: any HTTPTransport
    public var clock: TimeSource
    /// The gateway's public base URL (`public_url`), without a trailing slash.
    public var publicURL: String

    public init(transport: any HTTPTransport, clock: TimeSource = .system, publicURL: String) {
        self.transport = transport
        self.clock = clock
        self.publicURL = publicURL
    }

    /// The callback URL of a provider: each provider has its own (mix-up defence).
    public func callbackURL(for providerID: String) -> String {
        "\(publicURL)/v1/auth/\(providerID)/callback"
    }
}
