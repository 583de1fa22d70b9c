import Foundation
import NIOCore
import NIOSSL

/// How the relay reaches one upstream: an `http://` or `https://host[:port][/path]` URL (no credentials, query or
/// fragment); for `https`, with the TLS context its connections are made with, built once per upstream table.
struct RelayTarget: Sendable {
    /// `host[:port]` (with `tls.server_name`: that name instead of the host): the upstream request's `Host`.
    let authority: String
    /// Where its connections go (``UpstreamPools``).
    let endpoint: UpstreamPools.Endpoint
    /// The URL without credentials or query, for log lines.
    let redacted: String

    /// `nil` when the URL is not one the relay reaches (the router's client carries it): an `https` URL without a
    /// TLS configuration, or one whose context cannot be made.
    /// - Parameters:
    ///   - tls: for an `https` URL, what its connections trust and present (``OutboundTLS``, ``UpstreamTLSPlan``).
    ///   - serverName: `tls.server_name`: the name sent in SNI, checked in the certificate and sent as `Host`.
    init?(url text: String, tls: TLSConfiguration? = nil, serverName: String? = nil) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.user == nil, url.query == nil, url.fragment == nil
        else { return nil }
        let secure = scheme == "https"
        var context: NIOSSLContext?
        if secure {
            guard let tls, let made = try? NIOSSLContext(configuration: tls) else { return nil }
            context = made
        }
        let shown = serverName ?? host
        authority = url.port.map { "\(shown):\($0)" } ?? shown
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        // SNI names a host, never an address (RFC 6066 §3); an address is checked against the certificate's IP entries.
        let sni = serverName ?? (Self.isAddress(bare) ? nil : bare)
        endpoint = UpstreamPools.Endpoint(
            host: bare, port: url.port ?? (secure ? 443 : 80), tls: context.map { UpstreamPools.Endpoint.TLS(context: $0, serverName: sni) })
        redacted = "\(scheme)://\(url.port.map { "\(host):\($0)" } ?? host)\(UpstreamPath.split(text).path)"
    }

    private static func isAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
