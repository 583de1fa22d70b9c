import ServiceContextModule

/// Where a traced request's context carries the tracer (``ServiceContext/gatewayTracing``).
enum GatewayTracingKey: ServiceContextKey {
    typealias Value = GatewayTracing
}

extension ServiceContext {
    /// The gateway's tracer, in the context of a traced request and its child spans; nil otherwise.
    var gatewayTracing: GatewayTracing? {
        get { self[GatewayTracingKey.self] }
        set { self[GatewayTracingKey.self] = newValue }
    }
}
