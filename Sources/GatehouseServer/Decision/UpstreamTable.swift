import Foundation
import GatehouseConfiguration

/// The upstreams of `/v1/api`: `backend` and the named ones of `upstreams:`, and the choice between them — the
/// longest prefix that is a whole-segment prefix of the normalized path, else `backend`. One table is in force
/// at a time (``CurrentUpstreams``); a SIGHUP may put a new one in force.
final class UpstreamTable: Sendable {
    /// `backend` first (index 0), then the named upstreams in the file's order.
    let all: [UpstreamRoute]
    /// The named upstreams, longest prefix first (ties cannot happen: prefixes are unique).
    private let byPrefix: [UpstreamRoute]

    /// The table of `backend` and `upstreams`.
    /// - Parameter defaultTimeout: the time to start an answer of an upstream without `timeout_seconds`.
    init(backend: ServerSettings.BackendSettings, upstreams: [ServerSettings.UpstreamSettings], defaultTimeout: TimeInterval) {
        var all = [
            UpstreamRoute(
                index: 0, name: GatewayConfiguration.defaultUpstreamName, prefix: "", keepPrefix: true, backend: backend,
                defaultTimeout: defaultTimeout)
        ]
        for (offset, upstream) in upstreams.enumerated() {
            all.append(
                UpstreamRoute(
                    index: offset + 1, name: upstream.name, prefix: upstream.prefix, keepPrefix: upstream.keepPrefix, backend: upstream.backend,
                    defaultTimeout: defaultTimeout))
        }
        self.all = all
        byPrefix = all.dropFirst().sorted { $0.prefix.count > $1.prefix.count }
    }

    /// The table of a gateway's settings.
    convenience init(settings: ServerSettings) {
        self.init(backend: settings.backend, upstreams: settings.upstreams, defaultTimeout: settings.upstreamTimeout)
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
