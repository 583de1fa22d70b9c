public import Foundation

/// Base64url without padding (RFC 4648 §5), as JOSE and PKCE use it. Byte-level: it runs for every DPoP proof
/// and token hash, where Foundation's string replacing costs more than the decoding itself.
public enum Base64URL {
    /// Encodes `bytes` (a `Data`, a digest) as unpadded base64url, straight into the string's storage.
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let length = (bytes.count * 8 + 5) / 6
        return String(unsafeUninitializedCapacity: length) { output in
            var accumulator: UInt32 = 0
            var bits = 0
            var written = 0
            for byte in bytes {
                accumulator = (accumulator << 8 | UInt32(byte)) & 0xFFFF
                bits += 8
                while bits >= 6 {
                    bits -= 6
                    output[written] = character(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)) & 0x3F)
                    written += 1
                }
            }
            if bits > 0 {
                output[written] = character(UInt8(truncatingIfNeeded: accumulator << UInt32(6 - bits)) & 0x3F)
                written += 1
            }
            return written
        }
    }

    /// The base64url character of a six-bit value.
    @inlinable @inline(__always)
    static func character(_ sextet: UInt8) -> UInt8 {
        switch sextet {
        case 0..<26: sextet + UInt8(ascii: "A")
        case 26..<52: sextet - 26 + UInt8(ascii: "a")
        case 52..<62: sextet - 52 + UInt8(ascii: "0")
        case 62: UInt8(ascii: "-")
        default: UInt8(ascii: "_")
        }
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
        let complete = data.withUnsafeMutableBytes { decode(text, into: $0) }
        return complete ? data : nil
    }

    /// The same as bytes: what a parser reads next (a DPoP proof's claims), without a copy out of `Data`.
    @inlinable
    public static func decodedBytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        var complete = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count * 6 / 8) { buffer, initialized in
            complete = decode(text, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = complete ? buffer.count : 0
        }
        return complete ? bytes : nil
    }

    /// Decodes `text` into `output` (exactly `text.count * 6 / 8` bytes); `false` on a character that is not
    /// base64url. Contiguous text (a native string's bytes) is read through a buffer pointer.
    @inlinable
    static func decode(_ text: some Collection<UInt8>, into output: UnsafeMutableRawBufferPointer) -> Bool {
        if let complete = text.withContiguousStorageIfAvailable({ decodeGroups($0, into: output) }) { return complete }
        return decodeSextets(text, into: output)
    }

    /// The same over contiguous text, four characters (three bytes) at a time through ``sextets``, the last two
    /// or three through ``decodeSextets(_:into:)``: a proof's claims and signature are decoded on every
    /// DPoP-bound request, and a table look-up per character costs less than the branches of ``sextet(_:)``.
    @inlinable
    static func decodeGroups(_ text: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableRawBufferPointer) -> Bool {
        let whole = text.count & ~3
        let decoded = sextets.withUnsafeBufferPointer { table in
            var read = 0
            var written = 0
            while read < whole {
                let a = table[Int(text[read])]
                let b = table[Int(text[read + 1])]
                let c = table[Int(text[read + 2])]
                let d = table[Int(text[read + 3])]
                // Every value is below 64; `invalid` has the high bit.
                guard (a | b | c | d) & 0x80 == 0 else { return false }
                let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                output[written] = UInt8(truncatingIfNeeded: group >> 16)
                output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                output[written + 2] = UInt8(truncatingIfNeeded: group)
                read += 4
                written += 3
            }
            return true
        }
        guard decoded else { return false }
        guard whole < text.count else { return true }
        return decodeSextets(
            UnsafeBufferPointer(rebasing: text[whole...]), into: UnsafeMutableRawBufferPointer(rebasing: output[(whole / 4 * 3)...]))
    }

    /// ``sextet(_:)`` of every byte, ``invalid`` for those that are no base64url character.
    @usableFromInline
    static let sextets: [UInt8] = (0...255).map { sextet(UInt8($0)) ?? invalid }

    @usableFromInline
    static let invalid: UInt8 = 0xFF

    @inlinable
    static func decodeSextets(_ text: some Sequence<UInt8>, into output: UnsafeMutableRawBufferPointer) -> Bool {
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
