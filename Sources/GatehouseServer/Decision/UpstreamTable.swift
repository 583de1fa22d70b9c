import Foundation
import GatehouseConfiguration
import GatehouseCore

/// The upstreams of `/v1/api`: `backend` and the named ones of `upstreams:`, and the choice between them — the
/// longest prefix that is a whole-segment prefix of the normalized path, else `backend`. One table is in force
/// at a time (``CurrentUpstreams``); a SIGHUP may put a new one in force.
final class UpstreamTable: Sendable {
    /// `backend` first (index 0), then the named upstreams in the file's order.
    let all: [UpstreamRoute]
    /// The named upstreams, longest prefix first (ties cannot happen: prefixes are unique).
    private let byPrefix: [UpstreamRoute]
    /// `forward_auth.apps:`, in the file's order.
    let forwardAuthApps: [GatewayConfiguration.ForwardAuthApp]

    /// The table of `backend`, `upstreams` and the forward-auth apps.
    /// - Parameters:
    ///   - defaultTimeout: the time to start an answer of an upstream without `timeout_seconds`.
    ///   - outbound: the trust (`outbound_tls`) the upstreams' own `tls:` add to.
    init(
        backend: ServerSettings.BackendSettings, upstreams: [ServerSettings.UpstreamSettings],
        forwardAuthApps: [GatewayConfiguration.ForwardAuthApp] = [], defaultTimeout: TimeInterval, outbound: OutboundTLS? = nil
    ) {
        var claimFields: [String] = []
        for header in ([backend] + upstreams.map(\.backend) + forwardAuthApps.map(\.backend)).flatMap(\.claimHeaders) {
            let name = header.name.lowercased()
            if !claimFields.contains(name) { claimFields.append(name) }
        }
        var all = [
            UpstreamRoute(
                index: 0, name: GatewayConfiguration.defaultUpstreamName, prefix: "", keepPrefix: true, backend: backend,
                defaultTimeout: defaultTimeout, claimFields: claimFields, outbound: outbound)
        ]
        for (offset, upstream) in upstreams.enumerated() {
            all.append(
                UpstreamRoute(
                    index: offset + 1, name: upstream.name, prefix: upstream.prefix, keepPrefix: upstream.keepPrefix, backend: upstream.backend,
                    defaultTimeout: defaultTimeout, claimFields: claimFields, outbound: outbound))
        }
        self.all = all
        byPrefix = all.dropFirst().sorted { $0.prefix.count > $1.prefix.count }
        self.forwardAuthApps = forwardAuthApps
    }

    /// The table of a gateway's settings.
    convenience init(settings: ServerSettings, outbound: OutboundTLS? = nil) {
        self.init(
            backend: settings.backend, upstreams: settings.upstreams, forwardAuthApps: settings.forwardAuthApps,
            defaultTimeout: settings.upstreamTimeout, outbound: outbound)
    }

    /// What `/v1/authz` answers for, from the original request (both front ends ask it): the host the access
    /// rules and the apps compare (worked out only when one of them looks at hosts), the app of
    /// `forward_auth.apps:` that lists it, and the settings the answer carries (the app's, else `backend`'s).
    func forwardAuth(
        _ original: ForwardAuthTarget, policy: AccessPolicy
    ) -> (host: String?, app: GatewayConfiguration.ForwardAuthApp?, backend: ServerSettings.BackendSettings) {
        let host = policy.namesHosts || !forwardAuthApps.isEmpty ? original.host.flatMap { HostPattern.normalized(Substring($0)) } : nil
        let app = forwardAuthApp(host: host)
        return (host, app, app?.backend ?? fallback.backend)
    }

    /// The app of `forward_auth.apps:` that `/v1/authz` answers for, given the original request's host (as
    /// ``HostPattern/normalized(_:)`` gives it): the first that lists it; `nil` (then `backend`'s settings) when none does.
    func forwardAuthApp(host: String?) -> GatewayConfiguration.ForwardAuthApp? {
        guard let host else { return nil }
        return forwardAuthApps.first { $0.hosts.contains { $0.matches(host) } }
    }

    /// The default upstream (`backend`).
    var fallback: UpstreamRoute { all[0] }

    /// Whether there is only `backend`: every path goes there, and none need be looked at for the choice.
    var isSingle: Bool { byPrefix.isEmpty }

    /// The upstream of a normalized path's segments (decoded, as ``NormalizedPath`` has them).
    func route<Segments: Collection>(_ segments: Segments) -> UpstreamRoute where Segments.Element: StringProtocol {
        for upstream in byPrefix where upstream.prefix.count <= segments.count {
            if zip(upstream.prefix, segments).allSatisfy({ $0 == $1 }) { return upstream }
        }
        return fallback
    }
}
