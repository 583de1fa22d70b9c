import ServiceLifecycle

/// Closes the relay's idle backend connections when the gateway stops (the connections of requests still
/// under way close with their exchanges).
struct RelayPoolService: Service {
    let pools: UpstreamPools

    func run() async throws {
        try? await gracefulShutdown()
        pools.closeIdle()
    }
}
