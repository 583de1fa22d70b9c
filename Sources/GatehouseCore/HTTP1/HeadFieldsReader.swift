/// The field lines of a head and its empty line, read from the bytes: what ``RequestHeadReader`` and
/// ``ResponseHeadReader`` share. Field lines are `token ":" OWS value CRLF`, the value visible ASCII, spaces and
/// tabs (and, in an answer, obs-text: bytes above `0x7F`, which backends send in UTF-8 file names and NIOHTTP1 reads);
/// anything else (a bare CR or LF, a folded line, whitespace before the colon, a control character, a byte above
/// `0x7E` in a request) is declined.
package enum HeadFieldsReader {
    package enum Outcome {
        case incomplete
        case declined
        /// The fields, and the head's length (up to and with its empty line).
        case read([HeadField], length: Int)
    }

    /// Reads the field lines from `start` (right after the first line's CR LF) to the empty line; at most
    /// `maxHeadBytes` of head and `maxFields` fields; `obsText`: values may hold bytes above `0x7F`.
    package static func read(_ bytes: UnsafeRawBufferPointer, from start: Int, maxHeadBytes: Int, maxFields: Int, obsText: Bool = false) -> Outcome {
        var index = start
        var fields: [HeadField] = []
        while true {
            guard index < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
            if bytes[index] == HeadBytes.cr {
                guard index + 1 < bytes.count else { return .incomplete }
                guard bytes[index + 1] == HeadBytes.lf, index + 2 <= maxHeadBytes else { return .declined }
                return .read(fields, length: index + 2)
            }
            guard fields.count < maxFields else { return .declined }
            // The name: a token, then the colon right after it.
            let nameStart = index
            while index < bytes.count, bytes[index] != HeadBytes.colon {
                guard HeadBytes.isTokenByte(bytes[index]) else { return .declined }
                index += 1
            }
            guard index < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
            guard index > nameStart else { return .declined }
            let name = nameStart..<index
            index += 1
            // The value: leading spaces and tabs are not part of it; trailing ones are, as NIOHTTP1 keeps them.
            while index < bytes.count, HeadBytes.isBlank(bytes[index]) { index += 1 }
            let valueStart = index
            switch textLineEnd(bytes, from: valueStart, maxHeadBytes: maxHeadBytes, obsText: obsText) {
            case .incomplete: return .incomplete
            case .declined: return .declined
            case .at(let end): index = end
            }
            fields.append(HeadField(name: name, value: valueStart..<index))
            index += 2
            guard index <= maxHeadBytes else { return .declined }
        }
    }

    /// Where a line of text from `start` ends.
    package enum LineEnd {
        case incomplete
        /// A byte that is not visible ASCII, a space or a tab, or a CR without its LF.
        case declined
        /// The index of the line's CR (its LF follows).
        case at(Int)
    }

    /// The end of the line from `start` (a field's value, a reason phrase): visible ASCII, spaces and tabs up to its
    /// CR LF, within `maxHeadBytes`; `obsText`: bytes above `0x7F` too.
    package static func textLineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, maxHeadBytes: Int, obsText: Bool = false) -> LineEnd {
        var index = start
        while index < bytes.count, bytes[index] != HeadBytes.cr {
            let byte = bytes[index]
            guard HeadBytes.isVisible(byte) || HeadBytes.isBlank(byte) || (obsText && byte >= 0x80) else { return .declined }
            index += 1
        }
        guard index + 1 < bytes.count else { return index > maxHeadBytes ? .declined : .incomplete }
        return bytes[index + 1] == HeadBytes.lf ? .at(index) : .declined
    }
}
