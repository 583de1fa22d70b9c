import NIOCore

/// The byte-level reading ``HeadRelayFront`` and ``HeadRelayBack`` share: where a head ends, its lines, and which
/// fields a proxy hop drops (hop-by-hop ones, and those it sets itself).
enum HeadRelayFields {
    /// The length of the head at the start of `bytes` (up to and with its empty line), `nil` while incomplete.
    static func headLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = 3
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 10 {
                if bytes[index - 1] == 13, bytes[index - 2] == 10, bytes[index - 3] == 13 { return index + 1 }
                index += 1
            } else if byte == 13 {
                index += 1
            } else {
                index += 4
            }
        }
        return nil
    }

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

    /// Whether `bytes` at `start` spell `lowercased`, ignoring ASCII case.
    static func equals(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ lowercased: StaticString) -> Bool {
        let count = lowercased.utf8CodeUnitCount
        let expected = lowercased.utf8Start
        for offset in 0..<count where bytes[start + offset] | 0x20 != expected[offset] { return false }
        return true
    }

    /// Calls `field` with each field line's name and line bounds (`name`, `lineStart..<lineEnd`, the end before
    /// its CR LF) of the head `bytes[..<length]`, after its first line; `false` for a line without a colon.
    static func forEachField(
        _ bytes: UnsafeRawBufferPointer, length: Int, _ field: (_ nameEnd: Int, _ lineStart: Int, _ lineEnd: Int) -> Void
    ) -> (firstLineEnd: Int, valid: Bool) {
        var index = 0
        while index < length, bytes[index] != 13 { index += 1 }
        let firstLineEnd = index
        index += 2
        while index < length - 2 {
            let lineStart = index
            var colon = -1
            while index < length, bytes[index] != 13 {
                if colon < 0, bytes[index] == 58 { colon = index }
                index += 1
            }
            guard colon > lineStart else { return (firstLineEnd, false) }
            field(colon, lineStart, index)
            index += 2
        }
        return (firstLineEnd, true)
    }

    /// The head `bytes[..<length]` rewritten as a proxy hop writes it on: its first line, then `extra` (fields the
    /// hop sets, each line ending in CR LF), the fields it keeps, `X-Request-Id` and the empty line. `framing` judges
    /// each `Content-Length` and `Transfer-Encoding` line: `true` keeps it, `false` refuses the head (`nil`).
    static func rewritten(
        _ bytes: UnsafeRawBufferPointer, length: Int, allocator: ByteBufferAllocator, extra: String, requestID: String,
        framing: (_ handling: Handling, _ nameEnd: Int, _ lineEnd: Int) -> Bool
    ) -> ByteBuffer? {
        var fields = allocator.buffer(capacity: length)
        var acceptable = true
        let (firstLineEnd, valid) = forEachField(bytes, length: length) { nameEnd, lineStart, lineEnd in
            let handling = handling(of: bytes, lineStart, nameEnd)
            switch handling {
            case .drop: return
            case .contentLength, .transferEncoding:
                guard framing(handling, nameEnd, lineEnd) else {
                    acceptable = false
                    return
                }
            case .keep: break
            }
            fields.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<lineEnd + 2]))
        }
        guard valid, acceptable else { return nil }
        var head = allocator.buffer(capacity: fields.readableBytes + firstLineEnd + extra.utf8.count + 48)
        head.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<firstLineEnd + 2]))
        head.writeString(extra)
        head.writeBuffer(&fields)
        head.writeStaticString("X-Request-Id: ")
        head.writeString(requestID)
        head.writeStaticString("\r\n\r\n")
        return head
    }
}
