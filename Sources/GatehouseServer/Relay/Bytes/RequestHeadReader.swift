/// Reads an HTTP/1.1 request head straight from the bytes, for a relay that writes heads as bytes too (the floors
/// of `gatehouse-bench head-relay` measure what that saves against NIOHTTP1's parts).
///
/// It reads only a strict subset of RFC 9112 and declines everything else, so that whatever it reads, NIOHTTP1's
/// decoder reads the same way (`RequestHeadReaderTests` checks that on mutated heads). A declined head is not an
/// error: it is left, bytes untouched, to NIOHTTP1, whose answer (a head, or a 400) is the authoritative one.
///
/// What it reads:
/// - a request line `METHOD SP request-target SP HTTP/1.1 CRLF`, the method one of `GET`, `HEAD`, `POST`, `PUT`,
///   `DELETE`, `OPTIONS`, `PATCH`, the target in origin form (`/` then visible ASCII);
/// - field lines `token ":" OWS value CRLF`, the value visible ASCII, spaces and tabs (its trailing blanks kept, as
///   NIOHTTP1 keeps them);
/// - then the empty line. At most ``maxHeadBytes`` and ``maxFields``, as the gateway's NIOHTTP1 decoder is limited.
///
/// What it declines: a bare LF or CR, a field line folded onto the next (obs-fold), whitespace before a colon, control
/// characters and bytes above `0x7E` anywhere, `Transfer-Encoding`, more than one `Content-Length` or one that is not
/// all digits, another version, an unknown method, empty lines before the request line.
package enum RequestHeadReader {
    /// What ``read(_:)`` found at the start of the bytes.
    package enum Outcome: Equatable {
        /// No end of the head yet (within the limits): more bytes may complete it.
        case incomplete
        case read(RequestHeadView)
        /// Not in the subset this reader takes.
        case declined
    }

    /// The gateway's NIOHTTP1 limits (`GatewayHTTPChannel`): 80 KiB of head, 1000 fields.
    package static let maxHeadBytes = 80 * 1024
    package static let maxFields = 1000

    private static let methods: [[UInt8]] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"].map { Array($0.utf8) }
    private static let version = Array("HTTP/1.1".utf8)

    /// Reads the head at the start of `bytes`.
    package static func read(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        var index = 0
        // The method: letters up to a space.
        while index < bytes.count, bytes[index] != ASCIIByte.space {
            guard isUpperLetter(bytes[index]) else { return .declined }
            index += 1
        }
        guard index < bytes.count else { return bytes.count > 8 ? .declined : .incomplete }
        let method = 0..<index
        guard methods.contains(where: { equal(bytes, method, $0) }) else { return .declined }
        index += 1
        // The target: origin form, visible ASCII up to a space.
        let targetStart = index
        guard index < bytes.count else { return .incomplete }
        guard bytes[index] == UInt8(ascii: "/") else { return .declined }
        while index < bytes.count, bytes[index] != ASCIIByte.space {
            guard isVisible(bytes[index]) else { return .declined }
            index += 1
        }
        guard index < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
        let target = targetStart..<index
        index += 1
        // The version, then CR LF.
        let versionEnd = index + version.count
        guard versionEnd + 2 <= bytes.count else {
            return prefixMatches(bytes, from: index, [UInt8](version + [ASCIIByte.cr, ASCIIByte.lf])) ? .incomplete : .declined
        }
        guard equal(bytes, index..<versionEnd, version), bytes[versionEnd] == ASCIIByte.cr, bytes[versionEnd + 1] == ASCIIByte.lf else {
            return .declined
        }
        index = versionEnd + 2
        var fields: [RequestHeadView.Field] = []
        var contentLengths = 0
        while true {
            guard index < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
            if bytes[index] == ASCIIByte.cr {
                guard index + 1 < bytes.count else { return .incomplete }
                guard bytes[index + 1] == ASCIIByte.lf else { return .declined }
                let length = index + 2
                guard length <= maxHeadBytes else { return .declined }
                return .read(RequestHeadView(length: length, method: method, target: target, fields: fields))
            }
            guard fields.count < maxFields else { return .declined }
            // The name: a token, then the colon right after it.
            let nameStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                guard isTokenByte(bytes[index]) else { return .declined }
                index += 1
            }
            guard index < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
            let name = nameStart..<index
            guard !name.isEmpty else { return .declined }
            index += 1
            // The value: leading spaces and tabs are not part of it; trailing ones are, as NIOHTTP1 keeps them.
            while index < bytes.count, isBlank(bytes[index]) { index += 1 }
            let valueStart = index
            while index < bytes.count, bytes[index] != ASCIIByte.cr {
                guard isVisible(bytes[index]) || isBlank(bytes[index]) else { return .declined }
                index += 1
            }
            let valueEnd = index
            guard index + 1 < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
            guard bytes[index + 1] == ASCIIByte.lf else { return .declined }
            let value = valueStart..<valueEnd
            if equalIgnoringCase(bytes, name, "transfer-encoding") { return .declined }
            if equalIgnoringCase(bytes, name, "content-length") {
                contentLengths += 1
                guard contentLengths == 1, !value.isEmpty, value.count <= 18, value.allSatisfy({ isDigit(bytes[$0]) }) else { return .declined }
            }
            fields.append(RequestHeadView.Field(name: name, value: value))
            index += 2
            guard index <= maxHeadBytes else { return .declined }
        }
    }

    // MARK: Bytes

    private enum ASCIIByte {
        static let space = UInt8(ascii: " ")
        static let tab = UInt8(ascii: "\t")
        static let cr = UInt8(ascii: "\r")
        static let lf = UInt8(ascii: "\n")
    }

    private static func isUpperLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// `VCHAR` (RFC 5234): `!` to `~`.
    private static func isVisible(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == ASCIIByte.space || byte == ASCIIByte.tab }

    /// `tchar` (RFC 9110 §5.6.2).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        range.count == expected.count && zip(range, expected).allSatisfy { bytes[$0] == $1 }
    }

    /// Whether `bytes` from `start` on (as far as they go) agree with the start of `expected`.
    private static func prefixMatches(_ bytes: UnsafeRawBufferPointer, from start: Int, _ expected: [UInt8]) -> Bool {
        zip(start..<bytes.count, expected).allSatisfy { bytes[$0] == $1 }
    }

    /// Whether `bytes[range]` is `lowercased`, ignoring ASCII case.
    static func equalIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ lowercased: StaticString) -> Bool {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        let expected = lowercased.utf8Start
        for (offset, index) in range.enumerated() {
            let byte = bytes[index]
            let folded = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            if folded != expected[offset] { return false }
        }
        return true
    }
}
