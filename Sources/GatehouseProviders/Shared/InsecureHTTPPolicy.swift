import Foundation
import GatehouseCore

/// No secrets in clear: the one rule every kind applies to the URLs the gateway itself talks to.
///
/// A URL to which the gateway sends a client secret, an authorization code or a token, or from which it
/// takes the keys or metadata that decide what it trusts, must be `https`, unless
/// - its host is loopback: `127.0.0.0/8` in dotted-decimal, `[::1]` (any spelling of it), or `localhost`; or
/// - the provider file sets `allow_insecure_http: true` (for that provider only).
///
/// An `http` `public_url` (``ProviderContext/publicURL``) does not relax the rule: the provider leg
/// carries the client secret and refresh tokens, which outlive any dev setup, and a configuration that
/// passes `gatehouse check` on a laptop must not start failing when `public_url` becomes `https`.
/// Browser-facing URLs (`authorization_endpoint`, login pages) are not the gateway's requests and are
/// not checked.
///
/// At configuration time ``check(_:keys:)`` refuses every such URL of a provider file at once, each as
/// `file:line: what is wrong`; at runtime ``check(discovered:name:)`` refuses the endpoints a discovery
/// document names.
struct InsecureHTTPPolicy: Sendable {
    /// The provider-file key that lifts the rule for one provider.
    static let key = "allow_insecure_http"

    /// `allow_insecure_http: true`: every `http` URL of this provider is accepted.
    let allowsInsecureHTTP: Bool

    init(allowsInsecureHTTP: Bool) {
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// Reads `allow_insecure_http` (default false).
    init(_ map: ConfigMap) throws {
        self.init(allowsInsecureHTTP: try map.bool(Self.key) ?? false)
    }

    /// Whether the gateway may send secrets to `url` (or trust what it answers): not `http`, or a
    /// loopback host, or allowed by the provider file.
    func permits(_ url: String) -> Bool {
        guard !allowsInsecureHTTP, let components = URLComponents(string: url), components.scheme?.lowercased() == "http" else {
            return true
        }
        return Self.isLoopback(host: components.percentEncodedHost ?? "")
    }

    /// Refuses, all at once, the URLs of a provider file that the rule refuses.
    /// - Parameters:
    ///   - settings: the provider file's mapping; its `allow_insecure_http` is read here.
    ///   - keys: the keys whose URL receives a secret, code or token, or gives keys (`token_endpoint`;
    ///     a nested key as `probe.url`). `api.url`, which receives the user's token on every proxied
    ///     call, is checked for every kind.
    /// - Throws: ``ConfigErrorList`` with one problem per refused URL, at its key's line (a collecting map
    ///   records each instead).
    static func check(_ settings: ConfigMap, keys: [String]) throws {
        let policy = try InsecureHTTPPolicy(settings)
        var refused: [(map: ConfigMap, key: String, error: ConfigError)] = []
        for path in keys + ["api.url"] {
            guard let (map, key) = try locate(path, in: settings), let url = try map.url(key), !policy.permits(url) else { continue }
            let error = map.error(
                key,
                "'\(map.qualified(key))' must be https, not '\(url)': secrets, codes, tokens or keys would travel in clear "
                    + "(http is accepted only for a loopback host, or with '\(Self.key): true')")
            refused.append((map, key, error))
        }
        guard settings.collects else {
            if !refused.isEmpty { throw ConfigErrorList(refused.map(\.error)) }
            return
        }
        // A wrong `allow_insecure_http` is the one problem: the refusals it causes are only its follow-ons.
        guard !settings.hasProblem(Self.key) else { return }
        for (map, key, error) in refused { try map.report(error, key: key) }
    }

    /// Refuses an endpoint named at runtime (a discovery document's `token_endpoint`, …).
    /// - Throws: ``ProviderError/rejected(code:description:)`` `insecure_endpoint` when the rule refuses `url`.
    func check(discovered url: String?, name: String) throws(ProviderError) {
        guard let url, !permits(url) else { return }
        throw .rejected(
            code: "insecure_endpoint",
            description:
                "The discovery document names \(name) '\(url)', which is not https (http is accepted only for a loopback host, or with '\(Self.key): true')."
        )
    }

    /// Whether a URL's host (as written, IPv6 in brackets) is loopback: `localhost`, `127.x.y.z` or `[::1]`.
    static func isLoopback(host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" { return true }
        if host.hasPrefix("["), host.hasSuffix("]") { return isIPv6Loopback(String(host.dropFirst().dropLast())) }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { octet in
                (1...3).contains(octet.count) && octet.allSatisfy { $0.isASCII && $0.isNumber } && (Int(octet) ?? 256) <= 255
            }
    }

    /// Whether an IPv6 address (without brackets) is `::1`, in any of its spellings; no zone.
    private static func isIPv6Loopback(_ address: String) -> Bool {
        let halves = address.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        func groups(_ text: String) -> [UInt16]? {
            guard !text.isEmpty else { return [] }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            let values = parts.compactMap { part in (1...4).contains(part.count) && part.allSatisfy(\.isHexDigit) ? UInt16(part, radix: 16) : nil }
            return values.count == parts.count ? values : nil
        }
        guard let head = groups(halves[0]), let tail = halves.count == 2 ? groups(halves[1]) : [] else { return false }
        let all: [UInt16]
        if halves.count == 2 {
            guard head.count + tail.count <= 7 else { return false }
            all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard head.count == 8 else { return false }
            all = head
        }
        return all.dropLast().allSatisfy { $0 == 0 } && all.last == 1
    }

    /// The mapping and key of a dotted key path (`probe.url`), nil when a mapping on the way is absent.
    private static func locate(_ path: String, in settings: ConfigMap) throws -> (ConfigMap, String)? {
        var parts = path.split(separator: ".").map(String.init)
        let key = parts.removeLast()
        var map = settings
        for part in parts {
            guard let nested = try map.map(part) else { return nil }
            map = nested
        }
        return (map, key)
    }
}
