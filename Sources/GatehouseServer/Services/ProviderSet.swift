public import GatehouseCore
import Synchronization

/// The loaded providers, swapped whole on reload (SIGHUP) so a request sees one consistent set.
public final class ProviderSet: Sendable {
    private let providers: Mutex<[String: any AuthProvider]>
    /// Bumped by every ``replace(with:)``: what was derived from the old set (a provider token's cached verdict)
    /// can tell it is stale.
    private let replacements = Atomic<UInt64>(0)

    public init(_ providers: [any AuthProvider]) {
        self.providers = Mutex(Self.index(providers))
    }

    /// The provider with that id.
    public func provider(_ id: String) -> (any AuthProvider)? {
        providers.withLock { $0[id] }
    }

    /// The provider with that id, or `unknown_provider` (404).
    func require(_ id: String) throws -> any AuthProvider {
        guard let provider = provider(id) else { throw GatehouseError.unknownProvider(id) }
        return provider
    }

    /// All providers, sorted by id.
    public var all: [any AuthProvider] {
        providers.withLock { $0.values.sorted { $0.descriptor.id < $1.descriptor.id } }
    }

    /// Replaces the whole set.
    public func replace(with newProviders: [any AuthProvider]) {
        let indexed = Self.index(newProviders)
        providers.withLock { $0 = indexed }
        replacements.add(1, ordering: .releasing)
    }

    /// How many times the set was replaced (``replace(with:)``).
    var generation: UInt64 { replacements.load(ordering: .acquiring) }

    private static func index(_ providers: [any AuthProvider]) -> [String: any AuthProvider] {
        Dictionary(providers.map { ($0.descriptor.id, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
