import AsyncHTTPClient
import Foundation

/// The HTTP proxy the client uses to reach a gateway, read from the environment as curl reads it:
/// `https_proxy`/`HTTPS_PROXY` for an `https` gateway, `http_proxy`/`HTTP_PROXY` for an `http` one, none when
/// `no_proxy`/`NO_PROXY` names the gateway's host (a domain covers its subdomains; `*` covers every host).
/// Only `http://` proxies are supported; the client tunnels through them with `CONNECT`.
enum ProxySettings {
    /// The proxy for `gateway`, or nil to connect directly.
    static func proxy(
        forGateway gateway: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> HTTPClient.Configuration.Proxy? {
        guard let components = URLComponents(string: gateway), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased()
        else { return nil }
        let names = scheme == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy", "HTTP_PROXY"]
        guard let name = names.first(where: { !(environment[$0] ?? "").isEmpty }), let value = environment[name] else { return nil }
        if bypasses(host, environment: environment) { return nil }
        let url = value.contains("://") ? value : "http://" + value
        guard let proxy = URLComponents(string: url), proxy.scheme?.lowercased() == "http", let proxyHost = proxy.host, !proxyHost.isEmpty else {
            throw ClientFailure("\(name)=\(value): only http:// proxies are supported")
        }
        let port = proxy.port ?? 1080
        if let user = proxy.percentEncodedUser {
            let authorization = HTTPClient.Authorization.basic(
                username: user.removingPercentEncoding ?? user, password: proxy.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? "")
            return .server(host: proxyHost, port: port, authorization: authorization)
        }
        return .server(host: proxyHost, port: port)
    }

    /// Whether `no_proxy`/`NO_PROXY` names `host` (exactly, as a parent domain, or `*`).
    static func bypasses(_ host: String, environment: [String: String]) -> Bool {
        let list = environment["no_proxy"] ?? environment["NO_PROXY"] ?? ""
        for item in list.split(separator: ",") {
            var entry = item.trimmingCharacters(in: .whitespaces).lowercased()
            if entry == "*" { return true }
            if entry.hasPrefix("[") {
                entry = String(entry.dropFirst().prefix { $0 != "]" })  // [::1]:8080 → ::1
            } else if entry.filter({ $0 == ":" }).count == 1, let colon = entry.firstIndex(of: ":") {
                entry = String(entry[..<colon])  // host:port → host
            }
            while entry.hasPrefix(".") { entry.removeFirst() }
            if entry.isEmpty { continue }
            if host == entry || host.hasSuffix("." + entry) { return true }
        }
        return false
    }
}
