import Foundation
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
        /// PostgreSQL connection URL (`postgres://user:pass@host:port/db?sslmode=…`), written as `url` or
        /// composed from `host`, `port`, `user`, `password`, `database` and `tls`. A secret: never printed.
        public var url: String?
        /// PostgreSQL connection pool size.
        public var poolSize: Int
        /// `session_cache_seconds`: how long an instance may serve a resolved session from memory (0: never).
        /// The store's change feed evicts a copy when another instance ends or changes it: PostgreSQL's
        /// `LISTEN/NOTIFY` at once, SQLite's `data_version` watch within 0.2 s. Default: ``defaultSessionCacheSeconds``
        /// for `sqlite` and `memory`; 0 for `postgres` (whose feed holds a pooled connection).
        public var sessionCacheSeconds: Int = 0

        /// The default of `session_cache_seconds` for `sqlite` and `memory`.
        public static let defaultSessionCacheSeconds = 30

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
            sessionCacheSeconds = kind == .postgres ? 0 : Self.defaultSessionCacheSeconds
        }

        /// The settings with the URL redacted.
        public var description: String {
            "Store(kind: \(kind.rawValue), path: \(path), url: \(url == nil ? "nil" : "<redacted>"), poolSize: \(poolSize), sessionCacheSeconds: \(sessionCacheSeconds))"
        }

        /// The SQLite file when `store.path` is not given: `gatehouse.sqlite3` in the data directory.
        static func defaultPath(in dataDirectory: String) -> String {
            (dataDirectory as NSString).appendingPathComponent("gatehouse.sqlite3")
        }

        init(_ map: ConfigMap, baseDirectory: String, dataDirectory: String) throws {
            self.init()
            if let text = try map.choice("kind", ["sqlite", "memory", "postgres"]), let kind = Kind(rawValue: text) {
                self.kind = kind
            }
            path = try map.nonEmptyString("path").map { ConfigPath.resolve($0, against: baseDirectory) } ?? Self.defaultPath(in: dataDirectory)
            poolSize = try map.positiveInt("pool_size", unit: "connections") ?? poolSize
            sessionCacheSeconds = try map.int("session_cache_seconds", range: 0...3600) ?? (kind == .postgres ? 0 : Self.defaultSessionCacheSeconds)
            if kind == .postgres && sessionCacheSeconds > 0 && poolSize < 2 {
                throw map.error(
                    "session_cache_seconds",
                    "'\(map.qualified("session_cache_seconds"))' needs a pool_size of 2 or more (the change feed holds one connection)")
            }
            if kind == .postgres {
                url = try Self.postgresURL(map)
            } else {
                // Only PostgreSQL uses these; they may stay in the file (unread, so an unset variable is no error),
                // but its secrets are still never written inline.
                try map.unusedSecret("password")
                try map.unusedSecret("url", allowingInline: { !Self.carriesPassword($0) }, refusal: Self.urlRefusal)
                for key in Self.postgresKeys { _ = map.contains(key) }
            }
            try map.finish()
        }

        /// What an inline `url` with a password is told.
        static let urlRefusal = "must not be written inline with a password (a URL without one may be)"

        /// The keys only a `postgres` store reads.
        static let postgresKeys = ["url", "url_file", "host", "port", "user", "password", "password_file", "database", "tls"]

        /// Whether a PostgreSQL URL, as written in the file, carries a password (`postgres://user:pass@host/db`);
        /// a password that is one `${NAME}` reference (`postgres://user:${PGPASSWORD}@host/db`) is not written inline.
        static func carriesPassword(_ url: String) -> Bool {
            guard let scheme = url.range(of: "://") else { return false }
            // Up to the query: a password with an unescaped '/' still counts as one.
            let head = url[scheme.upperBound...].prefix { !"?#".contains($0) }
            guard let at = head.lastIndex(of: "@"), let colon = head[..<at].firstIndex(of: ":") else { return false }
            let password = String(head[head.index(after: colon)..<at])
            return !password.isEmpty && !ConfigMap.isReference(password)
        }

        /// The TLS modes, named as libpq's `sslmode`.
        static let tlsModes = ["disable", "prefer", "require", "verify-full"]

        /// `url` (or `url_file`), or the same connection as fields: `host`, `port`, `user`, `password`
        /// (or `password_file`), `database`. Fields become one percent-encoded URL, so both forms take the
        /// same path from here on. `tls` sets the URL's `sslmode` in either form.
        private static func postgresURL(_ map: ConfigMap) throws -> String {
            let tls = try map.choice("tls", tlsModes)
            // A URL without a password is no secret and may be written inline; one with a password may not.
            let url = try map.secret("url", allowingInline: { !Self.carriesPassword($0) }, refusal: Self.urlRefusal)
            let urlKey = map.node("url") != nil ? "url" : "url_file"
            if let host = try map.nonEmptyString("host") {
                if url != nil {
                    throw map.error(
                        urlKey, "give either '\(map.qualified(urlKey))' or '\(map.qualified("host"))' (with port, user, password, database), not both"
                    )
                }
                var components = URLComponents()
                components.scheme = "postgres"
                components.host = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
                components.port = try map.int("port", range: 1...65535)
                components.user = try map.nonEmptyString("user")
                components.password = try map.secret("password")
                if let database = try map.nonEmptyString("database") { components.path = "/" + database }
                if let tls { components.queryItems = [URLQueryItem(name: "sslmode", value: tls)] }
                guard let text = components.string else {
                    throw map.error("host", "'\(map.qualified("host"))' and its fields do not form a PostgreSQL address")
                }
                return text
            }
            for key in ["port", "user", "password", "password_file", "database"] where map.node(key) != nil {
                throw map.error(key, "'\(map.qualified(key))' needs '\(map.qualified("host"))'; with '\(map.qualified("url"))' put it in the URL")
            }
            guard let url, !url.isEmpty else {
                // Not when `url` has a problem of its own (unset variable, inline password): that one says it.
                try map.report(
                    "kind",
                    "'\(map.qualified("url"))' (or '\(map.qualified("url_file"))', or '\(map.qualified("host"))') is required when store.kind is postgres",
                    after: ["url", "url_file", "host"])
                return ""
            }
            guard var components = URLComponents(string: url),
                let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql", url.contains("://")
            else {
                throw map.error(urlKey, "'\(map.qualified("url"))' must be a postgres:// URL")
            }
            guard let tls else { return url }
            var items = (components.queryItems ?? []).filter { $0.name != "sslmode" }
            items.append(URLQueryItem(name: "sslmode", value: tls))
            components.queryItems = items
            return components.string ?? url
        }
    }
}
