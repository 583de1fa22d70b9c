public import GatehouseCore

extension GatewayConfiguration {
    /// One entry of `forward_auth.apps:` — an application behind the operator's own proxy (nginx `auth_request`,
    /// Caddy `forward_auth`, …), told apart by the original request's host: `/v1/authz` answers for it with its
    /// own identity settings (above all its assertion's audience), not `backend`'s.
    public struct ForwardAuthApp: Sendable, Equatable {
        /// `[a-z0-9-]{1,32}`, unique among the apps and the upstreams: the `upstream` field of its `/v1/authz`
        /// access-log lines.
        public var name: String
        /// The hosts it is served on; the first app (in the file's order) that lists the original request's host
        /// is the one answered for.
        public var hosts: [HostPattern]
        /// What it receives: `audience` (default: the name), `assertion` and `forward_access_token` (default:
        /// `backend`'s). `url` and `timeout_seconds` are the proxy's business, and `/v1/authz` always answers with
        /// the identity headers (the proxy chooses which it copies).
        public var backend: Backend

        public init(name: String, hosts: [HostPattern], backend: Backend) {
            self.name = name
            self.hosts = hosts
            self.backend = backend
        }
    }

    /// `forward_auth.apps:`, each entry read with `backend`'s values as its defaults. Every problem is reported
    /// at its line: a bad or repeated name (an upstream's included), missing or bad hosts, a host another app
    /// already lists, a key only a proxied upstream has.
    static func forwardAuthApps(_ map: ConfigMap, backend: Backend, upstreams: [Upstream]) throws -> [ForwardAuthApp] {
        var errors = ErrorCollector()
        let file = map.file
        let entries = errors.run(file: file, []) { try map.maps("apps") }
        var apps: [ForwardAuthApp] = []
        var names: Set<String> = Set([defaultUpstreamName] + upstreams.map(\.name))
        var hosts: Set<String> = []
        for entry in entries {
            guard let app = errors.attempt(file: file, { try self.forwardAuthApp(entry, backend: backend) }) else { continue }
            if !app.name.isEmpty, !names.insert(app.name).inserted {
                errors.run(file: file, ()) {
                    try entry.report("name", "'\(entry.qualified("name"))': an upstream or another app is already named '\(app.name)'")
                }
            }
            if let repeated = app.hosts.first(where: { !hosts.insert($0.key).inserted }) {
                errors.run(file: file, ()) {
                    try entry.report("hosts", "'\(entry.qualified("hosts"))': another app already lists '\(repeated)'")
                }
            }
            apps.append(app)
        }
        guard errors.isEmpty else { throw ConfigurationErrors(errors.errors) }
        return apps
    }

    /// One entry: its own keys, then `audience`, `assertion` and `forward_access_token` as `backend` reads them
    /// (``Backend/init(_:defaults:)``).
    private static func forwardAuthApp(_ map: ConfigMap, backend: Backend) throws -> ForwardAuthApp {
        let name = try map.requiredString("name")
        if !name.isEmpty, !isUpstreamName(name) {
            try map.report("name", "'\(map.qualified("name"))' '\(name)' must be 1 to 32 of a-z, 0-9 and '-'")
        }
        if !map.contains("hosts") {
            try map.report("hosts", "'\(map.qualified("hosts"))' is required: the host names the app is served on, like app.example.com")
        }
        let hosts = try map.hostPatterns("hosts", empty: "the host names the app is served on") ?? []
        for key in ["url", "timeout_seconds", "tls"] where map.contains(key) {
            try map.report(
                key, "'\(map.qualified(key))' is not an app's: the proxy in front of it reaches it (for a path under /v1/api, use upstreams:)")
        }
        if map.contains("identity_headers") {
            try map.report(
                "identity_headers",
                "'\(map.qualified("identity_headers"))' is not an app's: /v1/authz always answers with the identity headers, and the proxy chooses which it copies"
            )
        }
        var defaults = backend
        defaults.audience = name
        defaults.tls = nil
        let settings = try Backend(map, defaults: defaults)
        return ForwardAuthApp(name: name, hosts: hosts, backend: settings)
    }
}
