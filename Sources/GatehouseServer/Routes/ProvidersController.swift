import GatehouseCore
import Hummingbird

/// `GET /v1/providers`: the configured providers, their login style and capabilities (derived from the adapters).
struct ProvidersController: Sendable {
    let providers: ProviderSet

    struct Entry: Encodable, Sendable {
        var id: String
        var kind: String
        var name: String
        var login: LoginStyle
        var capabilities: ProviderCapabilities
    }

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/v1/providers") { _, _ in
            try JSONResponse.make(["providers": entries()])
        }
    }

    func entries() -> [Entry] {
        providers.all.map { provider in
            Entry(
                id: provider.descriptor.id, kind: provider.descriptor.kind, name: provider.descriptor.name,
                login: provider.loginStyle, capabilities: provider.capabilities)
        }
    }
}
