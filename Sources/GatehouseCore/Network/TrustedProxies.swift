#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The peers whose `X-Forwarded-For/Proto/Host` the gateway believes (`trusted_proxies:` — addresses and CIDR
/// ranges, IPv4 and IPv6). From such a peer those headers are kept and `X-Forwarded-For` is appended to; from
/// any other they are replaced, so that a client cannot claim another address, scheme or host.
public struct TrustedProxies: Sendable, Equatable {
    /// One range: the network's bytes (4 or 16) and its prefix length.
    struct Range: Sendable, Equatable {
        var network: [UInt8]
        var prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == network.count else { return false }
            var bits = prefix
            for (a, n) in zip(address, network) {
                guard bits > 0 else { return true }
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if a & mask != n & mask { return false }
                bits -= 8
            }
            return true
        }
    }

    private var ranges: [Range]

    /// Nobody is trusted.
    public static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) {
        self.ranges = ranges
    }

    /// - Parameter entries: `10.0.0.0/8`, `192.168.1.7`, `fd00::/8`, `::1`.
    /// - Throws: the first entry that is not an address or a CIDR range, as it was written.
    public init(_ entries: [String]) throws(InvalidEntry) {
        ranges = try entries.map { entry throws(InvalidEntry) in
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.bytes(of: String(parts[0])) else { throw InvalidEntry(entry: entry) }
            let prefix: Int
            if parts.count == 2 {
                guard let value = Int(parts[1]), (0...(bytes.count * 8)).contains(value), !parts[1].hasPrefix("+") else {
                    throw InvalidEntry(entry: entry)
                }
                prefix = value
            } else {
                prefix = bytes.count * 8
            }
            return Range(network: bytes, prefix: prefix)
        }
    }

    /// An entry of `trusted_proxies` that is neither an IP address nor a CIDR range.
    public struct InvalidEntry: Error, Sendable, Equatable {
        public var entry: String
        public init(entry: String) { self.entry = entry }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether the peer at `address` (as the socket reports it; an IPv4-mapped IPv6 address counts as IPv4) is trusted.
    public func trusts(_ address: String?) -> Bool {
        guard !ranges.isEmpty, let address, var bytes = Self.bytes(of: address) else { return false }
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            bytes = Array(bytes[12...])
        }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The address's bytes (4 or 16) by `inet_pton`, or nil; a zone (`%eth0`) is not an address here.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
