/// The `X-Forwarded-For/Proto/Host` the gateway sends upstream (both paths: the relay and the router's proxy).
///
/// From a trusted proxy (``TrustedProxies``) the proxy's own values are kept and the peer is appended to
/// `X-Forwarded-For`; from anyone else the client's values are ignored: `For` is the peer, `Proto` and `Host`
/// are the gateway's public URL's.
public struct ForwardedFields: Sendable, Equatable {
    public var forwardedFor: String?
    public var proto: String
    public var host: String

    /// - Parameters:
    ///   - peer: the address of the connection's other end.
    ///   - incomingFor, incomingProto, incomingHost: the request's own headers (several fields joined by `, `).
    ///   - publicProto, publicHost: the gateway's public URL's scheme and authority.
    public init(
        peer: String?, trusted: Bool, incomingFor: String?, incomingProto: String?, incomingHost: String?,
        publicProto: String, publicHost: String
    ) {
        if trusted {
            let chain = incomingFor.map { $0.trimmingWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
            forwardedFor = [chain, peer].compactMap { $0 }.joined(separator: ", ")
            if forwardedFor?.isEmpty == true { forwardedFor = nil }
            proto = incomingProto.flatMap(Self.firstValue) ?? publicProto
            host = incomingHost.flatMap(Self.firstValue) ?? publicHost
        } else {
            forwardedFor = peer
            proto = publicProto
            host = publicHost
        }
    }

    /// Several `X-Forwarded-For` fields as one comma-separated list (RFC 9110 §5.3); nil when there are none.
    public static func joined<S: StringProtocol>(_ values: [S]) -> String? {
        values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The first of comma-separated values, trimmed; nil when empty or holding a control character.
    public static func firstValue(_ text: String) -> String? {
        let first = text.split(separator: ",", maxSplits: 1).first.map { String($0).trimmingWhitespace() } ?? ""
        guard !first.isEmpty, !first.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return first
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
