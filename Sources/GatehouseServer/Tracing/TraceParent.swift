/// A W3C `traceparent` field (Trace Context §3.2): its trace id and whether the caller sampled it. What does not
/// parse is treated as absent (§3.2.2): the gateway then starts a trace of its own.
struct TraceParent: Sendable, Equatable {
    /// The field as it came (passed on unchanged when the gateway does not sample the request).
    let value: String
    /// The trace id, 32 lowercase hex digits.
    var traceID: Substring { value.dropFirst(3).prefix(32) }
    /// The `sampled` flag (bit 0 of `trace-flags`).
    let sampled: Bool

    /// Parses `value`; nil for anything §3.2 rejects: a wrong length or separator, a version `ff` (or a version
    /// `00` with more after it), a character that is not lowercase hex, an all-zero trace or parent id.
    init?(_ value: String) {
        let utf8 = value.utf8
        guard utf8.count >= 55 else { return nil }
        var flags: UInt8 = 0
        var valid = true
        var traceIDZero = true
        var parentIDZero = true
        var version: UInt8 = 0
        var index = 0
        for byte in utf8.prefix(55) {
            switch index {
            case 2, 35, 52:
                valid = valid && byte == UInt8(ascii: "-")
            default:
                guard let digit = Self.hexValue(byte) else { return nil }
                switch index {
                case 0..<2: version = version << 4 | digit
                case 3..<35: traceIDZero = traceIDZero && digit == 0
                case 36..<52: parentIDZero = parentIDZero && digit == 0
                default: flags = flags << 4 | digit
                }
            }
            index += 1
        }
        guard valid, !traceIDZero, !parentIDZero, version != 0xff else { return nil }
        // Version 00 is exactly 55 characters; a later version may carry more after a `-` (§4.3).
        if utf8.count > 55 {
            guard version != 0, utf8[utf8.index(utf8.startIndex, offsetBy: 55)] == UInt8(ascii: "-") else { return nil }
        }
        self.value = value
        self.sampled = flags & 1 == 1
    }

    /// A version-00 field: `00-{trace id}-{parent id}-{00|01}`, the trace id from `high` and `low`.
    static func write(traceID high: UInt64, _ low: UInt64, parentID: UInt64, sampled: Bool) -> String {
        String(unsafeUninitializedCapacity: 55) { buffer in
            buffer[0] = UInt8(ascii: "0")
            buffer[1] = UInt8(ascii: "0")
            buffer[2] = UInt8(ascii: "-")
            hex(high, into: buffer, at: 3)
            hex(low, into: buffer, at: 19)
            buffer[35] = UInt8(ascii: "-")
            hex(parentID, into: buffer, at: 36)
            buffer[52] = UInt8(ascii: "-")
            buffer[53] = UInt8(ascii: "0")
            buffer[54] = sampled ? UInt8(ascii: "1") : UInt8(ascii: "0")
            return 55
        }
    }

    private static func hex(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var value = value
        for position in (0..<16).reversed() {
            let digit = UInt8(truncatingIfNeeded: value & 0xf)
            buffer[offset + position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") - 10 + digit
            value >>= 4
        }
    }

    /// Lowercase hex only (§3.2.2.3: `HEXDIGLC`).
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
