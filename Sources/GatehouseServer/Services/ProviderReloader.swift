import Foundation
import GatehouseConfiguration
import GatehouseCore
import Logging

/// Reloads the provider files, the access rules (`access:` of `gatehouse.yaml`), the upstreams (`backend`,
/// `upstreams:` and `forward_auth.apps:`) and what outbound calls trust (`outbound_tls`, every certificate and key
/// file named there, by the upstreams' `tls:` and by the providers' `tls.ca_file`) on SIGHUP (``HangupReloader``). All are read and validated first; if any does not validate, all
/// the old ones stay in force.
struct ProviderReloader: Sendable {
    let providers: ProviderSet
    let load: @Sendable () throws -> [any AuthProvider]
    let policy: CurrentPolicy
    /// The running `limits.upstream_timeout_seconds` (a restart changes it): the time of an upstream without
    /// its own `timeout_seconds`.
    let upstreamTimeout: TimeInterval
    /// Reads `gatehouse.yaml` again; `nil` when there is no configuration file to read.
    let loadConfiguration: (@Sendable () throws -> GatewayConfiguration)?
    /// What outbound calls trust: `outbound_tls` is read again (its files too) before the providers are, so that
    /// their `tls.ca_file` adds to the new trust.
    let trust: OutboundTrust
    let logger: Logger

    func reload() {
        do {
            let configuration = try loadConfiguration?()
            let previous = try configuration.map { try trust.replace(with: OutboundTLS($0.outboundTLS)) }
            let loaded: [any AuthProvider]
            do {
                loaded = try load()
            } catch {
                if let previous { _ = try? trust.replace(with: previous) }
                throw error
            }
            providers.replace(with: loaded)
            // The rules, the upstreams and the providers' generation together: no request sees one without the
            // others (without a configuration file, the rules and upstreams in force stay).
            let current = policy.current
            policy.replace(
                with: PolicySnapshot(
                    access: configuration?.access ?? current.access,
                    upstreams: configuration.map {
                        UpstreamTable(
                            backend: $0.backend, upstreams: $0.upstreams, forwardAuthApps: $0.forwardAuthApps, defaultTimeout: upstreamTimeout,
                            outbound: trust.outbound)
                    } ?? current.upstreams,
                    providerGeneration: providers.generation))
            logger.notice(
                "providers reloaded",
                metadata: [
                    "count": "\(loaded.count)", "access_rules": "\(policy.current.access.rules.count)",
                    "upstreams": "\(policy.current.upstreams.all.count - 1)",
                ])
        } catch {
            logger.error("reload refused: keeping the previous providers, access rules and upstreams", metadata: ["errors": "\(error)"])
        }
    }
}
