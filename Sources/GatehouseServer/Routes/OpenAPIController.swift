import GatehouseCore
import HTTPTypes
import Hummingbird

/// `GET /openapi.json`: the API's OpenAPI 3.1 document, with this gateway's provider ids filled in.
struct OpenAPIController: Sendable {
    let providers: ProviderSet

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
                body: .init(byteBuffer: OpenAPIDocument.render(providerIDs: providers.all.map(\.descriptor.id))))
        }
    }
}
