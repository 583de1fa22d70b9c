/// What an adapter gets from the server: a transport to its provider, a clock and where it is mounted.
public struct ProviderContext: Sendable {
    public var transport: any HTTPTransport
    public var clock: TimeSource
    /// The gateway's public base URL (`public_url`), without a trailing slash.
    public var publicURL: String
    /// Makes the transport of a provider whose file names its own certificate authorities (`tls.ca_file`, an
    /// absolute path): the server's trusts them besides `outbound_tls`. Nil: ``transport`` serves every provider.
    public var trustingTransport: (@Sendable (_ caFile: String) throws -> any HTTPTransport)?

    public init(
        transport: any HTTPTransport, clock: TimeSource = .system, publicURL: String,
        trustingTransport: (@Sendable (_ caFile: String) throws -> any HTTPTransport)? = nil
    ) {
        self.transport = transport
        self.clock = clock
        self.publicURL = publicURL
        self.trustingTransport = trustingTransport
    }

    /// The context of a provider that trusts `caFile` too: its transport is ``trustingTransport``'s.
    public func trusting(caFile: String) throws -> ProviderContext {
        guard let trustingTransport else { return self }
        var context = self
        context.transport = try trustingTransport(caFile)
        return context
    }

    /// The callback URL of a provider: each provider has its own (mix-up defence).
    public func callbackURL(for providerID: String) -> String {
        "\(publicURL)/v1/auth/\(providerID)/callback"
    }
}
