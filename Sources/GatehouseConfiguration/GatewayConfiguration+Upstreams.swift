import GatehouseCore

extension GatewayConfiguration {
    /// One entry of `upstreams:` — a named upstream that `/v1/api{prefix}/…` goes to instead of `backend`.
    public struct Upstream: Sendable, Equatable {
        /// `[a-z0-9-]{1,32}`, unique: the upstream's label in the access log and the metrics.
        public var name: String
        /// A whole-segment prefix of the normalized path under `/v1/api`: `/billing` (no trailing slash).
        public var prefix: String
        /// Whether the prefix stays on the forwarded path (default: removed).
        public var keepPrefix: Bool
        /// Where it goes and what it receives; every key not written comes from `backend`, but `audience`
        /// (default: the name), `url` (required) and `tls` (its own).
        public var backend: Backend

        public init(name: String, prefix: String, keepPrefix: Bool = false, backend: Backend) {
            self.name = name
            self.prefix = prefix
            self.keepPrefix = keepPrefix
            self.backend = backend
        }
    }

    /// The label of the default upstream (`backend:`) in the access log and the metrics.
    public static let defaultUpstreamName = "backend"

    /// `upstreams:`, each entry read with `backend`'s values as its defaults. Every problem is reported at its
    /// line: a bad or repeated name, a bad or repeated prefix, a missing url, and whatever `backend` refuses.
    static func upstreams(_ map: ConfigMap, backend: Backend) throws -> [Upstream] {
        var errors = ErrorCollector()
        let file = map.file
        let entries = errors.run(file: file, []) { try map.maps("upstreams") }
        var upstreams: [Upstream] = []
        var names: Set<String> = [defaultUpstreamName]
        var prefixes: Set<String> = []
        for entry in entries {
            guard let upstream = errors.attempt(file: file, { try self.upstream(entry, backend: backend) }) else { continue }
            if !upstream.name.isEmpty, !names.insert(upstream.name).inserted {
                let message =
                    upstream.name == defaultUpstreamName
                    ? "'\(entry.qualified("name"))': '\(defaultUpstreamName)' is the name of the default upstream (`backend`)"
                    : "'\(entry.qualified("name"))': another upstream is already named '\(upstream.name)'"
                // Recorded with the entry's other problems (a thrown one on a line that has some would be dropped).
                errors.run(file: file, ()) { try entry.report("name", message) }
            }
            if !upstream.prefix.isEmpty, !prefixes.insert(upstream.prefix).inserted {
                errors.run(file: file, ()) {
                    try entry.report("prefix", "'\(entry.qualified("prefix"))': another upstream already has the prefix '\(upstream.prefix)'")
                }
            }
            upstreams.append(upstream)
        }
        guard errors.isEmpty else { throw ConfigurationErrors(errors.errors) }
        return upstreams
    }

    /// One entry: its own keys, then the backend-shaped rest (``Backend/init(_:defaults:)``).
    private static func upstream(_ map: ConfigMap, backend: Backend) throws -> Upstream {
        let name = try map.requiredString("name")
        if !name.isEmpty, !isUpstreamName(name) {
            try map.report("name", "'\(map.qualified("name"))' '\(name)' must be 1 to 32 of a-z, 0-9 and '-'")
        }
        let prefix = try map.requiredString("prefix")
        if !prefix.isEmpty, let problem = prefixProblem(prefix) {
            try map.report("prefix", "'\(map.qualified("prefix"))' '\(prefix)' \(problem)")
        }
        let keepPrefix = try map.bool("keep_prefix") ?? false
        if !map.contains("url") {
            try map.report("url", "'\(map.qualified("url"))' is required: where the upstream is, like http://127.0.0.1:9001")
        }
        var defaults = backend
        defaults.audience = name
        // Another host: `backend`'s CA, client certificate and server name are not its own.
        defaults.tls = nil
        let settings = try Backend(map, defaults: defaults)
        return Upstream(name: name, prefix: prefix, keepPrefix: keepPrefix, backend: settings)
    }

    /// `[a-z0-9-]{1,32}`.
    static func isUpstreamName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count) && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// What is wrong with a prefix, or `nil`: it must be `/` and plain segments (a normalized path: no empty,
    /// `.` or `..` segment, no percent escape, no `*`, `?` or `#`), and not `/` itself (that is `backend`).
    static func prefixProblem(_ prefix: String) -> String? {
        guard prefix.hasPrefix("/") else { return "must start with '/', like /billing" }
        let segments = prefix.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard prefix != "/" else { return "is the whole path: that is `backend`" }
        for segment in segments {
            if segment.isEmpty { return "must not have an empty segment or a trailing '/'" }
            if segment == "." || segment == ".." { return "must not have a '.' or '..' segment" }
            let plain = segment.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-._~!$&'()+,;=:@".unicodeScalars.contains(scalar))
            }
            if !plain { return "must be plain path segments (letters, digits, -._~ and the like; no '%', '*', '?' or '#')" }
        }
        return nil
    }
}
