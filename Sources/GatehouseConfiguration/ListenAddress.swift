/// A `host:port` to listen on (`listen:` or `serve --listen`).
///
/// IPv6 hosts are written in brackets (`[::1]:8080`); ``host`` holds them without.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// Host name or address, without IPv6 brackets.
    public var host: String
    /// TCP port; 0 lets the system pick one.
    public var port: Int

    /// - Parameters:
    ///   - host: host name or address, without IPv6 brackets.
    ///   - port: TCP port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`; nil when the text is not one.
    /// - Parameter text: e.g. `127.0.0.1:8080`, `localhost:8080` or `[::1]:8080`.
    public init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
            guard hostPart.contains(":") else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { return nil }
        }
        guard !hostPart.isEmpty, !hostPart.contains(where: { $0 == " " || $0 == "/" }),
            !portPart.isEmpty, portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber),
            let port = Int(portPart), (0...65535).contains(port)
        else { return nil }
        self.init(host: String(hostPart), port: port)
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
