import Foundation

/// An origin compared by scheme, host and port, the way Persona's verifier compared audiences.
///
/// A configured (relying-party) audience may be `https://rp`, `https://rp:8443`, `app://rp`, or the
/// short forms `rp:8080` and `rp`, which mean `http`. A missing port is 80 for `http` and 443 for
/// `https`. An asserted `aud` must be an origin: a path other than `/`, a query or a fragment is refused.
public struct BrowserIDAudience: Sendable, Equatable, CustomStringConvertible {
    /// `http`, `https` or `app`, lower case.
    public var scheme: String
    /// Lower case.
    public var host: String
    /// The explicit or default port; nil only for `app://` origins without one.
    public var port: Int?

    /// Reads a configured audience; nil when it is not one of the accepted forms.
    public init?(configured text: String) {
        if text.contains("://") {
            guard case .success(let origin) = Self.origin(text) else { return nil }
            self = origin
            return
        }
        // rp:8080 or rp: the RP's own host, over http.
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = Self.hostname(parts[0]) else { return nil }
        var port = 80
        if parts.count == 2 {
            guard let value = Int(parts[1]), (1...65535).contains(value), parts[1].allSatisfy(\.isASCII) else { return nil }
            port = value
        }
        self.init(scheme: "http", host: host, port: port)
    }

    /// Creates an audience from its parts.
    public init(scheme: String, host: String, port: Int?) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Reads the `aud` of an assertion. Fails with the reason (`has non-empty path`, …).
    static func asserted(_ text: String) -> Result<Self, BrowserIDFailure> {
        origin(text)
    }

    public var description: String {
        let defaultPort = scheme == "https" ? 443 : (scheme == "http" ? 80 : nil)
        guard let port, port != defaultPort else { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }

    /// Why `asserted` is not this audience (`scheme mismatch`, `port mismatch`, `domain mismatch`), or nil.
    public func mismatch(_ asserted: BrowserIDAudience) -> String? {
        if asserted.scheme != scheme { return "scheme mismatch" }
        if asserted.port != port { return "port mismatch" }
        if asserted.host != host { return "domain mismatch" }
        return nil
    }

    // MARK: Parsing

    private static func origin(_ text: String) -> Result<Self, BrowserIDFailure> {
        guard let separator = text.range(of: "://") else {
            return .failure(.audienceMismatch("'\(text)' is not an origin (scheme://host[:port])"))
        }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard ["http", "https", "app"].contains(scheme) else {
            return .failure(.audienceMismatch("unsupported scheme '\(scheme)'"))
        }
        var rest = text[separator.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            let tail = rest[end...]
            guard tail == "/" else { return .failure(.audienceMismatch("has non-empty path")) }
            rest = rest[..<end]
        }
        guard !rest.contains("@") else { return .failure(.audienceMismatch("'\(text)' carries user information")) }
        var hostPart = rest
        var port: Int? = scheme == "https" ? 443 : (scheme == "http" ? 80 : nil)
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") || rest[..<colon].hasSuffix("]") {
            let portText = rest[rest.index(after: colon)...]
            guard let value = Int(portText), (1...65535).contains(value), portText.allSatisfy(\.isASCII) else {
                return .failure(.audienceMismatch("'\(text)' has an invalid port"))
            }
            port = value
            hostPart = rest[..<colon]
        }
        guard let host = hostname(hostPart) else { return .failure(.audienceMismatch("'\(text)' has an invalid host")) }
        return .success(Self(scheme: scheme, host: host, port: port))
    }

    /// A DNS name, IPv4 address or bracketed IPv6 address, lower-cased; nil for anything else.
    private static func hostname(_ text: Substring) -> String? {
        let host = text.lowercased()
        guard !host.isEmpty, host.count <= 253 else { return nil }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            return host
        }
        guard host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." || $0 == "_" }) else { return nil }
        return host
    }
}
