import ArgumentParser

/// The stores `store-lookup` can measure: the two that persist sessions.
enum BenchStoreKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    case sqlite
    case postgres
}
