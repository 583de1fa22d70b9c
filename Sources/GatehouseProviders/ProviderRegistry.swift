public import GatehouseCore

/// The provider kinds this build knows. Adding a kind is one line in ``all``.
public enum ProviderRegistry {
    /// Every kind, one line each.
    public static let all: [any ProviderKind.Type] = [
        OAuth2Kind.self,
        SPiDKind.self,
        BrowserIDKind.self,
        OIDCKind.self,
        ACSKind.self,
        CaptureKind.self,
    ]

    /// The kinds keyed by their `kind:` name.
    public static let kinds: [String: any ProviderKind.Type] = Dictionary(uniqueKeysWithValues: all.map { ($0.kind, $0) })
}
