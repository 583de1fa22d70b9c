/// The `X-Forwarded-For/Proto/Host` and `X-Real-IP` the gateway sends upstream (both paths: the relay and the
/// router's proxy).
///
/// From a trusted proxy (``TrustedProxies``) the proxy's own values are kept and the peer is appended to
/// `X-Forwarded-For`; from anyone else the client's values are ignored: `For` is the peer, `Proto` and `Host`
/// are the gateway's public URL's. `X-Real-IP` is one address, the client's as far as the gateway can tell
/// (``clientAddress(chain:peer:proxies:)``); a client's own is never passed on, since applications read it as
/// the one address to log, rate-limit or allow-list, and one sent by a client is whatever it wants to be.
public struct ForwardedFields: Sendable, Equatable {
    public var forwardedFor: String?
    public var proto: String
    public var host: String
    /// `X-Real-IP`: the peer, or behind trusted proxies the client they name.
    public var realIP: String?

    /// - Parameters:
    ///   - peer: the address of the connection's other end.
    ///   - proxies: whose `X-Forwarded-*` are believed (`trusted_proxies`).
    ///   - incomingFor, incomingProto, incomingHost: the request's own headers (several fields joined by `, `).
    ///   - publicProto, publicHost: the gateway's public URL's scheme and authority.
    public init(
        peer: String?, proxies: TrustedProxies, incomingFor: String?, incomingProto: String?, incomingHost: String?,
        publicProto: String, publicHost: String
    ) {
        if proxies.trusts(peer) {
            let chain = incomingFor.map { $0.trimmingWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
            forwardedFor = [chain, peer].compactMap { $0 }.joined(separator: ", ")
            if forwardedFor?.isEmpty == true { forwardedFor = nil }
            proto = incomingProto.flatMap(Self.firstValue) ?? publicProto
            host = incomingHost.flatMap(Self.firstValue) ?? publicHost
            realIP = Self.clientAddress(chain: chain, peer: peer, proxies: proxies)
        } else {
            forwardedFor = peer
            proto = publicProto
            host = publicHost
            realIP = peer
        }
    }

    /// The client's address behind trusted proxies, as nginx's `real_ip_recursive on` finds it: the
    /// `X-Forwarded-For` chain followed by the peer, read from the right, skipping addresses of trusted
    /// proxies; the first other address is the client. An entry that is no address (a port, `unknown`, a
    /// forgery) stops the walk at the last trusted hop, which is the nearest address the gateway can vouch
    /// for; so does a chain of trusted proxies only.
    public static func clientAddress(chain: String?, peer: String?, proxies: TrustedProxies) -> String? {
        guard let peer else { return nil }
        let hops = (chain?.split(separator: ",").map { String($0).trimmingWhitespace() } ?? []) + [peer]
        var nearest = peer
        for hop in hops.reversed() {
            if proxies.trusts(hop) {
                nearest = hop
            } else {
                return TrustedProxies.bytes(of: hop) == nil ? nearest : hop
            }
        }
        return nearest
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
