import Foundation
import GatehouseConfiguration
import GatehouseCore
import Logging
import Testing

@testable import GatehouseServer

/// The one snapshot a request reads: a reload puts the rules, the upstreams and the providers' generation in force
/// together, or none of them.
@Suite("Policy snapshot")
struct PolicySnapshotTests {
    private struct Broken: Error {}

    private static func reloader(
        _ providers: ProviderSet, _ policy: CurrentPolicy, load: @escaping @Sendable () throws -> [any AuthProvider]
    )
        -> ProviderReloader
    {
        ProviderReloader(
            providers: providers, load: load, policy: policy, upstreamTimeout: 30, loadConfiguration: nil,
            trust: try! OutboundTrust(OutboundTLS(systemRoots: false, environment: [:])), logger: Logger(label: "test"))
    }

    @Test("a reload without a configuration file keeps the rules and upstreams and puts the new providers' generation with them")
    func reloadCarriesTheGeneration() {
        let providers = ProviderSet([])
        let access = AccessPolicy(rules: [], fallback: .deny)
        let policy = CurrentPolicy(
            PolicySnapshot(access: access, upstreams: UpstreamTable(backend: ServerSettings.BackendSettings(), upstreams: [], defaultTimeout: 30)))
        Self.reloader(providers, policy, load: { [] }).reload()
        #expect(providers.generation == 1)
        #expect(policy.current.providerGeneration == 1)
        #expect(policy.current.access.fallback == .deny)

        // A reload that fails leaves everything as it was: the providers and the snapshot's generation alike.
        Self.reloader(providers, policy, load: { throw Broken() }).reload()
        #expect(providers.generation == 1)
        #expect(policy.current.providerGeneration == 1)
    }
}
