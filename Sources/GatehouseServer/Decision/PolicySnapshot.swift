import GatehouseCore

/// What the decisions read of the configuration, as one value: the access rules (`access:`), the upstreams
/// (`backend`, `upstreams:`, `forward_auth.apps:`) and the generation of the providers loaded with them. Read once
/// per request by both front ends and every route that judges (``CurrentPolicy/current``), and replaced as a whole
/// on SIGHUP, so no request sees the new rules with the old upstreams, or a verdict on a provider token made
/// under the old providers with the new rules.
struct PolicySnapshot: Sendable {
    let access: AccessPolicy
    let upstreams: UpstreamTable
    /// The ``ProviderSet/generation`` in force with these rules: a provider token's cached verdict, or a
    /// connection's memo of one, made under another generation is not used (the token is verified again).
    let providerGeneration: UInt64

    init(access: AccessPolicy, upstreams: UpstreamTable, providerGeneration: UInt64 = 0) {
        self.access = access
        self.upstreams = upstreams
        self.providerGeneration = providerGeneration
    }
}
