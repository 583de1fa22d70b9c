public import Foundation

/// Base64url without padding (RFC 4648 §5), as JOSE and PKCE use it. Byte-level: it runs for every DPoP proof
/// and token hash, where Foundation's string replacing costs more than the decoding itself.
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        var bytes = Array(data.base64EncodedData())
        var length = bytes.count
        while length > 0, bytes[length - 1] == UInt8(ascii: "=") { length -= 1 }
        for index in 0..<length {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes[..<length], as: UTF8.self)
    }

    /// Decodes unpadded base64url; nil for anything else (`+`, `/`, `=` or other characters).
    public static func decode(_ text: String) -> Data? {
        decode(text.utf8)
    }

    /// The same over UTF-8 bytes (a part of a JWS, without making a `String` of it first). Decoded straight
    /// into the result, six bits per character; like Foundation's decoder, the unused bits of the last
    /// character are not looked at. Inlinable: called across modules with a view of a proof's or a JWT's bytes,
    /// it is specialized for that view at the caller instead of reading each byte through a witness table.
    @inlinable
    public static func decode(_ text: some Collection<UInt8>) -> Data? {
        let count = text.count
        // A length of 1 mod 4 is never valid base64.
        guard count % 4 != 1 else { return nil }
        var data = Data(count: count * 6 / 8)
        let complete = data.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) -> Bool in
            var accumulator: UInt32 = 0
            var bits = 0
            var written = 0
            for byte in text {
                guard let value = sextet(byte) else { return false }
                accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFF
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    output[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                    written += 1
                }
            }
            return true
        }
        return complete ? data : nil
    }

    /// The value of one base64url character; `nil` for `+`, `/`, `=` and anything else.
    @inlinable @inline(__always)
    static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
