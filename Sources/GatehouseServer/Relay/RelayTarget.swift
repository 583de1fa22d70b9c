import Foundation

/// How the relay reaches one upstream: a plain `http://host[:port][/path]` URL (no credentials, query or fragment).
struct RelayTarget: Sendable {
    /// `host[:port]`: the upstream request's `Host`.
    let authority: String
    /// Where its connections go (``UpstreamPools``).
    let endpoint: UpstreamPools.Endpoint
    /// The URL without credentials or query, for log lines.
    let redacted: String

    /// `nil` when the URL is not one the relay reaches (the router's client carries it, TLS included).
    init?(url text: String) {
        guard let url = URL(string: text), url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty,
            url.user == nil, url.query == nil, url.fragment == nil
        else { return nil }
        authority = url.port.map { "\(host):\($0)" } ?? host
        endpoint = UpstreamPools.Endpoint(host: host, port: url.port ?? 80)
        redacted = "http://\(authority)\(UpstreamPath.split(text).path)"
    }
}
