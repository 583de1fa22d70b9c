/// The byte classes of HTTP/1.1 heads (RFC 9110, RFC 9112) that the head readers share.
package enum HeadBytes {
    package static let space = UInt8(ascii: " ")
    package static let tab = UInt8(ascii: "\t")
    package static let cr = UInt8(ascii: "\r")
    package static let lf = UInt8(ascii: "\n")
    package static let colon = UInt8(ascii: ":")

    package static func isUpperLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }

    package static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// `VCHAR` (RFC 5234): `!` to `~`.
    package static func isVisible(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) }

    package static func isBlank(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// `tchar` (RFC 9110 §5.6.2).
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    package static func equal(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        range.count == expected.count && zip(range, expected).allSatisfy { bytes[$0] == $1 }
    }

    /// Whether `bytes` from `start` on (as far as they go) agree with the start of `expected`.
    package static func prefixMatches(_ bytes: UnsafeRawBufferPointer, from start: Int, _ expected: [UInt8]) -> Bool {
        zip(start..<bytes.count, expected).allSatisfy { bytes[$0] == $1 }
    }

    /// Whether `bytes[range]` is `lowercased`, ignoring ASCII case.
    package static func equalIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ lowercased: StaticString) -> Bool {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        let expected = lowercased.utf8Start
        for (offset, index) in range.enumerated() where fold(bytes[index]) != expected[offset] { return false }
        return true
    }

    /// A whole number of digits only (at most 18 of them), or `nil`.
    package static func number(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value = 0
        for index in range {
            guard isDigit(bytes[index]) else { return nil }
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
        }
        return value
    }
}

extension HeadBytes {
    /// Whether `bytes[range]` and `bytes[other]` are the same, ignoring ASCII case.
    package static func equalIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ other: Range<Int>) -> Bool {
        guard range.count == other.count else { return false }
        return zip(range, other).allSatisfy { fold(bytes[$0]) == fold(bytes[$1]) }
    }

    /// The byte, an upper-case letter made lower-case.
    package static func fold(_ byte: UInt8) -> UInt8 { isUpperLetter(byte) ? byte | 0x20 : byte }
}
