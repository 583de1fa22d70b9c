public import GatehouseCore

/// The provider kinds this build knows, keyed by `kind:`. Adding a kind is one line here.
public enum ProviderRegistry {
    public static let kinds: [String: any ProviderKind.Type] = Dictionary(
        uniqueKeysWithValues: [
            OAuth2Kind.self
        ].map { ($0.kind, $0) })
}
