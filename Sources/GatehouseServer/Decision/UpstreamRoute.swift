import Foundation
import GatehouseConfiguration

/// One upstream as the decision chooses it and the front ends reach it: `backend` (the default) or one of
/// `upstreams:`. Plain values, worked out once from the settings. A class: the relay's exchange carries it
/// from the decision to the answer's log line, and a SIGHUP may put a new table in force meanwhile, so each
/// request keeps the route it was decided with (one reference, not a copy of its strings).
final class UpstreamRoute: Sendable {
    /// Its position in ``UpstreamTable/all``: 0 is the default upstream.
    let index: Int
    /// The label in the access log and the metrics (`backend` for the default upstream).
    let name: String
    /// The prefix's segments (`["billing"]`); empty for the default upstream.
    let prefix: [String]
    /// Whether the prefix stays on the forwarded path.
    let keepPrefix: Bool
    /// What it receives: identity headers, assertion (with its own audience), access token.
    let backend: ServerSettings.BackendSettings
    /// `scheme://authority` of its URL.
    let origin: String
    /// The path of its URL, without trailing slash; prefixed to every forwarded path.
    let basePath: String
    /// How long it has to start its answer (then 504 `upstream_timeout`).
    let timeout: TimeInterval
    /// How the event-loop relay reaches it; `nil` for a URL that is not plain `http://host[:port][/path]`
    /// (the router's client carries those, TLS included).
    let relayTarget: RelayTarget?
    /// The names (lower case) of every field an upstream of the table gets from the gateway's claims
    /// (`identity_headers.claims` of any of them): a client's own copy never reaches this one either, so no
    /// upstream can take a client's field for the gateway's.
    let claimFields: [String]
    /// For an `https` URL with its own `tls:`: the TLS configuration and server name the router's client uses.
    let tls: UpstreamTLSPlan?

    /// - Parameter outbound: the trust of `outbound_tls` its own `tls:` adds to; nil: `tls:` is not used.
    init(
        index: Int, name: String, prefix: String, keepPrefix: Bool, backend: ServerSettings.BackendSettings, defaultTimeout: TimeInterval,
        claimFields: [String] = [], outbound: OutboundTLS? = nil
    ) {
        self.index = index
        self.name = name
        self.prefix = prefix.split(separator: "/").map(String.init)
        self.keepPrefix = keepPrefix
        self.backend = backend
        (origin, basePath) = UpstreamPath.split(backend.url)
        timeout = backend.timeout ?? defaultTimeout
        self.claimFields = claimFields
        if let own = backend.tls, let outbound {
            tls = UpstreamTLSPlan(url: backend.url, tls: own, outbound: outbound)
        } else {
            tls = nil
        }
        // An `https` upstream is the relay's too, with the trust in force and its own `tls:` (made once, here).
        let relayTLS = tls.map { try? $0.configuration.get() } ?? (try? outbound?.configuration())
        relayTarget = RelayTarget(url: backend.url, tls: relayTLS, serverName: tls?.named?.name)
    }

    /// Whether it is `backend`.
    var isDefault: Bool { index == 0 }

    /// How many leading segments of the path the forwarded path loses: the prefix's, unless it is kept.
    var droppedSegments: Int { keepPrefix ? 0 : prefix.count }
}
