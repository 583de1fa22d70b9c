import Synchronization

/// Request ids: one per request, in the access log, the audit lines, problem bodies (`request_id`), the
/// answer's and the upstream request's `X-Request-Id`. A process-wide random prefix and a counter: unique
/// without a syscall per request, and not a secret (they only correlate log lines).
enum RequestIdentifier {
    private static let prefix: String = {
        let value = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - value.count) + value
    }()
    private static let counter = Atomic<UInt64>(UInt64.random(in: 0 ... UInt64(UInt32.max)))

    /// A new id: 32 lowercase hex digits.
    static func make() -> String {
        let value = String(counter.wrappingAdd(1, ordering: .relaxed).newValue, radix: 16)
        return prefix + String(repeating: "0", count: 16 - value.count) + value
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
