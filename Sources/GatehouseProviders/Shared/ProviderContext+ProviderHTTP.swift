import GatehouseCore

extension ProviderContext {
    /// The provider's transport wrapped in ``ProviderHTTP`` (failure mapping, no extra deadline).
    var http: ProviderHTTP { ProviderHTTP(transport: transport) }
}
