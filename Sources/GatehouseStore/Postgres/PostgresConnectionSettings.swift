import Foundation
public import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL turned into a client configuration.
///
/// `sslmode` is PostgreSQL's own URL parameter: `disable`, `prefer` (the default), `require` (encrypted,
/// certificate not checked, as libpq does) or `verify-full` (encrypted, certificate and host name checked).
public struct PostgresConnectionSettings: Sendable {
    public var configuration: PostgresClient.Configuration

    /// - Parameters:
    ///   - url: the connection URL; user name, password and database may be percent-encoded.
    ///   - poolSize: the most connections the pool opens.
    public init(url: String, poolSize: Int) throws {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else { throw PostgresURLError("not a postgres:// URL") }
        guard let host = components.host, !host.isEmpty else { throw PostgresURLError("the URL names no host") }
        let username = components.percentEncodedUser?.removingPercentEncoding ?? "postgres"
        let password = components.percentEncodedPassword?.removingPercentEncoding
        let path = components.percentEncodedPath.removingPercentEncoding ?? ""
        let database = path.hasPrefix("/") ? String(path.dropFirst()) : path
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer(Self.unverified())
        case "require": tls = .require(Self.unverified())
        case "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        default: throw PostgresURLError("sslmode must be disable, prefer, require or verify-full")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: username, password: password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = max(1, poolSize)
        // A connection is opened for the call that needs it: the SPEC gives a request 1 s from a fault to its
        // 503, and a server that answers opens a connection in milliseconds even when busy.
        configuration.options.connectTimeout = .seconds(1)
        self.configuration = configuration
    }

    private static func unverified() -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        return tls
    }
}

/// A malformed `store.url`; the message never contains the URL (it holds the password).
public struct PostgresURLError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = "store.url: \(description)" }
}
