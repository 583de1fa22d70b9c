import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Liveness, readiness, metrics and the JWKS of the identity assertion.
struct HealthController: Sendable {
    let gateway: Gateway

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/healthz") { _, _ in try JSONResponse.make(["status": "ok"]) }
        router.get("/readyz") { _, _ in try await ready() }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: gateway.metrics.render())))
        }
        router.get("/.well-known/jwks.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: gateway.signer.jwks)))
        }
    }

    /// Ready when the store answers and at least one provider is loaded.
    private func ready() async throws -> Response {
        do {
            try await gateway.store.ping()
        } catch {
            throw GatehouseError(code: "store_unavailable", status: 503, detail: "The session store cannot be reached.", retryAfter: 5)
        }
        let count = gateway.providers.all.count
        guard count > 0 else {
            throw GatehouseError(code: "no_providers", status: 503, detail: "No provider is configured.", retryAfter: 5)
        }
        return try JSONResponse.make(["status": "ready", "providers": "\(count)"])
    }
}
