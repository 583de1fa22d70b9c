import Synchronization

/// Request ids: one per request, in the access log, the audit lines, problem bodies (`request_id`), the
/// answer's and the upstream request's `X-Request-Id`. A process-wide random prefix and a counter: unique
/// without a syscall per request, and not a secret (they only correlate log lines).
enum RequestIdentifier {
    private static let prefix = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(UInt64.random(in: 0...UInt64(UInt32.max)))

    /// A new id: 32 lowercase hex digits, the prefix's then the counter's, written straight into the string
    /// (one allocation: every relayed request makes one).
    static func make() -> String {
        let value = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(unsafeUninitializedCapacity: 32) { bytes in
            hex(prefix, into: bytes, at: 0)
            hex(value, into: bytes, at: 16)
            return 32
        }
    }

    /// `value` as 16 lowercase hex digits at `offset`.
    private static func hex(_ value: UInt64, into bytes: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var rest = value
        for index in (offset..<offset + 16).reversed() {
            let digit = UInt8(truncatingIfNeeded: rest & 0xF)
            bytes[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            rest >>= 4
        }
    }

    /// The id of a request: the one a trusted proxy in front sent (`X-Request-Id`, so that its log lines and
    /// ours share it), when it is a plain token of at most 128 characters; else a new one. A client's own
    /// value is never taken: it could forge another request's id in the logs.
    static func of(incoming: String?, fromTrustedProxy: Bool) -> String {
        guard fromTrustedProxy, let incoming, !incoming.isEmpty, incoming.utf8.count <= 128,
            incoming.utf8.allSatisfy(isTokenByte)
        else { return make() }
        return incoming
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default: false
        }
    }
}
