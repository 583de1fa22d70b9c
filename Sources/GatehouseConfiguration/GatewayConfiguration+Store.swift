import GatehouseCore

extension GatewayConfiguration {
    /// `store:` — where sessions live.
    public struct Store: Sendable, Equatable, CustomStringConvertible {
        /// `store.kind`.
        public enum Kind: String, Sendable, CaseIterable {
            /// In process; tests and throwaway runs.
            case memory
            /// The embedded default; survives restarts.
            case sqlite
            /// Shared by several gateway instances.
            case postgres
        }

        public var kind: Kind
        /// SQLite database file (absolute once loaded).
        public var path: String
        /// PostgreSQL connection URL (`postgres://user:pass@host:port/db`). A secret: never printed.
        public var url: String?
        /// PostgreSQL connection pool size.
        public var poolSize: Int

        /// - Parameters:
        ///   - kind: `sqlite` by default.
        ///   - path: SQLite file.
        ///   - url: PostgreSQL URL, required for `postgres`.
        ///   - poolSize: PostgreSQL pool size.
        public init(kind: Kind = .sqlite, path: String = "./data/gatehouse.sqlite3", url: String? = nil, poolSize: Int = 20) {
            self.kind = kind
            self.path = path
            self.url = url
            self.poolSize = poolSize
        }

        /// The settings with the URL redacted.
        public var description: String {
            "Store(kind: \(kind.rawValue), path: \(path), url: \(url == nil ? "nil" : "<redacted>"), poolSize: \(poolSize))"
        }

        init(_ map: ConfigMap, baseDirectory: String) throws {
            self.init()
            if let text = try map.choice("kind", ["sqlite", "memory", "postgres"]), let kind = Kind(rawValue: text) {
                self.kind = kind
            }
            path = ConfigPath.resolve(try map.nonEmptyString("path") ?? path, against: baseDirectory)
            poolSize = try map.positiveInt("pool_size", unit: "connections") ?? poolSize
            if kind == .postgres {
                guard let url = try map.secret("url"), !url.isEmpty else {
                    throw map.error("kind", "'\(map.qualified("url"))' (or '\(map.qualified("url_file"))') is required when store.kind is postgres")
                }
                let scheme = url.prefix { $0 != ":" }.lowercased()
                guard scheme == "postgres" || scheme == "postgresql", url.contains("://") else {
                    let key = map.contains("url") && map.node("url") != nil ? "url" : "url_file"
                    throw map.error(key, "'\(map.qualified("url"))' must be a postgres:// URL")
                }
                self.url = url
            } else {
                // Only PostgreSQL uses these; they may stay in the file (unread, so an unset variable is no error).
                _ = map.contains("url")
                _ = map.contains("url_file")
            }
            try map.finish()
        }
    }
}
