import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Liveness, readiness, metrics and the JWKS of the identity assertion.
struct HealthController: Sendable {
    let store: any SessionStore
    let providers: ProviderSet
    let metrics: GatewayMetrics
    let signer: AssertionSigner
    /// `metrics_listen` is set: `/metrics` is served there (``metricsApplication``), not here.
    var metricsOnOwnListener = false

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/healthz") { _, _ in try JSONResponse.make(["status": "ok"]) }
        router.get("/readyz") { _, _ in try await ready() }
        if !metricsOnOwnListener { Self.addMetricsRoute(to: router, metrics: metrics) }
        router.get("/.well-known/jwks.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: signer.jwks)))
        }
    }

    /// `GET /metrics`, Prometheus text.
    static func addMetricsRoute<Context: RequestContext>(to router: Router<Context>, metrics: GatewayMetrics) {
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.render())))
        }
    }

    private struct Readiness: Encodable {
        var status: String
        var providers: Int
        /// Providers that cannot take logins right now (e.g. OIDC discovery failing), with the reason.
        var notReady: [String]
        enum CodingKeys: String, CodingKey {
            case status, providers
            case notReady = "not_ready"
        }
    }

    /// Ready when the store answers and at least one provider is loaded. A provider whose own IdP is
    /// unreachable makes the gateway `degraded`, not unready: taking every instance out of a load
    /// balancer would not bring that IdP back, and the other providers still work.
    private func ready() async throws -> Response {
        do {
            try await store.ping()
        } catch {
            throw GatehouseError(code: .storeUnavailable, status: 503, detail: "The session store cannot be reached.", retryAfter: 5)
        }
        let count = providers.all.count
        guard count > 0 else {
            throw GatehouseError(code: .noProviders, status: 503, detail: "No provider is configured.", retryAfter: 5)
        }
        var notReady: [String] = []
        for case let provider as any ReadinessReporting in providers.all {
            if case .notReady(let reason) = await provider.readiness { notReady.append("\(provider.descriptor.id) (\(reason))") }
        }
        return try JSONResponse.make(Readiness(status: notReady.isEmpty ? "ready" : "degraded", providers: count, notReady: notReady))
    }
}
