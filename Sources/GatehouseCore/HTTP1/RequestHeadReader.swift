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
public enum RequestHeadReader {
    /// What ``read(_:)`` found at the start of the bytes.
    public enum Outcome: Equatable {
        /// No end of the head yet (within the limits): more bytes may complete it.
        case incomplete
        case read(RequestHeadView)
        /// Not in the subset this reader takes.
        case declined
    }

    /// The gateway's NIOHTTP1 limits (`GatewayHTTPChannel`): 80 KiB of head, 1000 fields.
    public static let maxHeadBytes = 80 * 1024
    public static let maxFields = 1000

    private static let methods: [[UInt8]] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"].map { Array($0.utf8) }
    private static let versionLine = Array("HTTP/1.1\r\n".utf8)

    /// Reads the head at the start of `bytes`.
    public static func read(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        var index = 0
        // The method: letters up to a space.
        while index < bytes.count, bytes[index] != HeadBytes.space {
            guard HeadBytes.isUpperLetter(bytes[index]) else { return .declined }
            index += 1
        }
        guard index < bytes.count else { return bytes.count > 8 ? .declined : .incomplete }
        let method = 0..<index
        guard methods.contains(where: { HeadBytes.equal(bytes, method, $0) }) else { return .declined }
        index += 1
        // The target: origin form, visible ASCII up to a space.
        let targetStart = index
        guard index < bytes.count else { return .incomplete }
        guard bytes[index] == UInt8(ascii: "/") else { return .declined }
        while index < bytes.count, bytes[index] != HeadBytes.space {
            guard HeadBytes.isVisible(bytes[index]) else { return .declined }
            index += 1
        }
        guard index < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
        let target = targetStart..<index
        index += 1
        // The version, then CR LF.
        let versionEnd = index + versionLine.count
        guard versionEnd <= bytes.count else {
            return HeadBytes.prefixMatches(bytes, from: index, versionLine) ? .incomplete : .declined
        }
        guard HeadBytes.equal(bytes, index..<versionEnd, versionLine) else { return .declined }
        switch HeadFieldsReader.read(bytes, from: versionEnd, maxHeadBytes: maxHeadBytes, maxFields: maxFields) {
        case .incomplete: return .incomplete
        case .declined: return .declined
        case .read(let fields, let length):
            var contentLengths = 0
            for field in fields {
                if HeadBytes.equalIgnoringCase(bytes, field.name, "transfer-encoding") { return .declined }
                if HeadBytes.equalIgnoringCase(bytes, field.name, "content-length") {
                    contentLengths += 1
                    guard contentLengths == 1, HeadBytes.number(bytes, field.value) != nil else { return .declined }
                }
            }
            return .read(RequestHeadView(length: length, method: method, target: target, fields: fields))
        }
    }
}
