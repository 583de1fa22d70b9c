/// Reads an HTTP/1.1 answer's head straight from the bytes, with its body's framing (RFC 9112 §6.3): the
/// backend's side of a relay that reads and writes heads as bytes (``RequestHeadReader`` is the client's).
///
/// Like the request reader it reads a strict subset and declines the rest, so that whatever it reads NIOHTTP1's
/// decoder reads alike, framing included (`ResponseHeadReaderTests` checks that on mutated answers):
/// - a status line `HTTP/1.1 SP 3DIGIT SP reason CRLF` (or `HTTP/1.0`), the reason visible ASCII, spaces and tabs;
///   not `101` (a protocol switch is not a relay's exchange);
/// - the field lines of ``HeadFieldsReader``, obs-text allowed in values;
/// - framing: none for an answer to `HEAD`, a `1xx`, `204` or `304`; else `Transfer-Encoding: chunked` alone (one
///   field, one coding), else one `Content-Length` of digits, else until the connection closes. Any other
///   `Transfer-Encoding`, both fields at once, more than one `Content-Length`, a `Connection` field on a `1xx`, or
///   `Transfer-Encoding` or a `1xx` in an `HTTP/1.0` answer is declined.
public enum ResponseHeadReader {
    public enum Outcome: Equatable {
        case incomplete
        case read(ResponseHeadView)
        case declined
    }

    /// The bounds of the relay's NIOHTTP1 response decoder (its defaults).
    public static let maxHeadBytes = 80 * 1024
    public static let maxFields = 100 * 1024

    private static let versionPrefix = Array("HTTP/1.1 ".utf8)
    private static let oldVersionPrefix = Array("HTTP/1.0 ".utf8)

    /// Reads the answer's head at the start of `bytes`; `toHEAD`: the request was a `HEAD` (no body, whatever the
    /// head says).
    public static func read(_ bytes: UnsafeRawBufferPointer, toHEAD: Bool = false) -> Outcome {
        let statusStart = versionPrefix.count
        // `HTTP/1.1 `, three digits and a space.
        guard bytes.count >= statusStart + 4 else {
            let matches =
                (HeadBytes.prefixMatches(bytes, from: 0, versionPrefix) || HeadBytes.prefixMatches(bytes, from: 0, oldVersionPrefix))
                && (min(statusStart, bytes.count)..<bytes.count).allSatisfy {
                    $0 == statusStart + 3 ? bytes[$0] == HeadBytes.space : HeadBytes.isDigit(bytes[$0])
                }
            return matches ? .incomplete : .declined
        }
        let http10 = HeadBytes.equal(bytes, 0..<statusStart, oldVersionPrefix)
        guard http10 || HeadBytes.equal(bytes, 0..<statusStart, versionPrefix), bytes[statusStart + 3] == HeadBytes.space,
            let status = HeadBytes.number(bytes, statusStart..<statusStart + 3), status >= 100, status != 101, !http10 || status >= 200
        else { return .declined }
        // The reason phrase, then CR LF.
        let statusLineEnd: Int
        switch HeadFieldsReader.textLineEnd(bytes, from: statusStart + 4, maxHeadBytes: maxHeadBytes) {
        case .incomplete: return .incomplete
        case .declined: return .declined
        case .at(let end): statusLineEnd = end
        }
        switch HeadFieldsReader.read(bytes, from: statusLineEnd + 2, maxHeadBytes: maxHeadBytes, maxFields: maxFields, obsText: true) {
        case .incomplete: return .incomplete
        case .declined: return .declined
        case .read(let fields, let length):
            guard let framing = framing(bytes, fields, status: status, toHEAD: toHEAD), !http10 || framing != .chunked else { return .declined }
            return .read(
                ResponseHeadView(length: length, statusLineEnd: statusLineEnd, status: status, fields: fields, framing: framing, http10: http10))
        }
    }

    /// The body's framing by the fields; `nil` for a framing this reader declines.
    private static func framing(_ bytes: UnsafeRawBufferPointer, _ fields: [HeadField], status: Int, toHEAD: Bool) -> ResponseFraming? {
        var length: Int?
        var lengths = 0
        var encodings = 0
        var chunked = false
        for field in fields {
            if HeadBytes.equalIgnoringCase(bytes, field.name, "content-length") {
                lengths += 1
                length = HeadBytes.number(bytes, field.value)
                guard length != nil else { return nil }
            } else if HeadBytes.equalIgnoringCase(bytes, field.name, "transfer-encoding") {
                encodings += 1
                chunked = HeadBytes.equalIgnoringCase(bytes, field.value, "chunked")
            } else if status < 200, HeadBytes.equalIgnoringCase(bytes, field.name, "connection") {
                // NIOHTTP1 reads nothing after an interim answer that says `close`: no final answer to relay.
                return nil
            }
        }
        guard lengths + encodings <= 1, encodings == 0 || chunked else { return nil }
        if toHEAD || status < 200 || status == 204 || status == 304 { return .bodiless }
        if chunked { return .chunked }
        if let length { return .length(length) }
        return .untilClose
    }
}
