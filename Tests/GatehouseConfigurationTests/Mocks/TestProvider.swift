import GatehouseCore

/// What the test kinds build: the descriptor plus the kind's own settings as read.
struct TestProvider: AuthProvider {
    var descriptor: ProviderDescriptor
    var settings: [String: String]
}
