import GatehouseCore

/// What ``HeadRelayFront`` and ``HeadRelayBack`` do with a field, by its name: which fields a proxy hop drops
/// (hop-by-hop ones, and those it sets itself), and which frame a body.
enum HeadRelayFields {
    /// What a proxy does with a field, by its name (`bytes[start..<end]`).
    enum Handling {
        case keep, drop, contentLength, transferEncoding
    }

    static func handling(of bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Handling {
        switch end - start {
        case 4 where equals(bytes, start, "host"): .drop
        case 10 where equals(bytes, start, "connection") || equals(bytes, start, "keep-alive"): .drop
        case 7 where equals(bytes, start, "upgrade"), 7 where equals(bytes, start, "trailer"), 2 where equals(bytes, start, "te"): .drop
        case 12 where equals(bytes, start, "x-request-id"): .drop
        case 14 where equals(bytes, start, "content-length"): .contentLength
        case 17 where equals(bytes, start, "transfer-encoding"): .transferEncoding
        default: .keep
        }
    }

    private static func equals(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ lowercased: StaticString) -> Bool {
        HeadBytes.equalIgnoringCase(bytes, start..<start + lowercased.utf8CodeUnitCount, lowercased)
    }
}
