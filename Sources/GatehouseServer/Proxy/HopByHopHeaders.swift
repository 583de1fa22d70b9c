import GatehouseCore

/// Headers that belong to one connection (RFC 9110 §7.6.1) and never cross the proxy: `Connection`,
/// `Keep-Alive`, `Proxy-Authenticate`, `Proxy-Authorization`, `Proxy-Connection`, `TE`, `Trailer`,
/// `Transfer-Encoding`, `Upgrade`, and whatever `Connection` lists.
enum HopByHopHeaders {
    /// Whether `name` (in any case) is one of the fixed hop-by-hop names.
    static func isFixed(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2: ASCII.equalsIgnoringCase(name, "te")
        case 7: ASCII.equalsIgnoringCase(name, "trailer") || ASCII.equalsIgnoringCase(name, "upgrade")
        case 10: ASCII.equalsIgnoringCase(name, "connection") || ASCII.equalsIgnoringCase(name, "keep-alive")
        case 16: ASCII.equalsIgnoringCase(name, "proxy-connection")
        case 17: ASCII.equalsIgnoringCase(name, "transfer-encoding")
        case 18: ASCII.equalsIgnoringCase(name, "proxy-authenticate")
        case 19: ASCII.equalsIgnoringCase(name, "proxy-authorization")
        default: false
        }
    }

    /// Whether the name `bytes[name]` (in any case) is one of the fixed hop-by-hop names: ``isFixed(_:)`` for a head
    /// read from the bytes (``AnswerHeadWriter``).
    static func isFixed(_ bytes: UnsafeRawBufferPointer, _ name: Range<Int>) -> Bool {
        switch name.count {
        case 2: HeadBytes.equalIgnoringCase(bytes, name, "te")
        case 7: HeadBytes.equalIgnoringCase(bytes, name, "trailer") || HeadBytes.equalIgnoringCase(bytes, name, "upgrade")
        case 10: HeadBytes.equalIgnoringCase(bytes, name, "connection") || HeadBytes.equalIgnoringCase(bytes, name, "keep-alive")
        case 16: HeadBytes.equalIgnoringCase(bytes, name, "proxy-connection")
        case 17: HeadBytes.equalIgnoringCase(bytes, name, "transfer-encoding")
        case 18: HeadBytes.equalIgnoringCase(bytes, name, "proxy-authenticate")
        case 19: HeadBytes.equalIgnoringCase(bytes, name, "proxy-authorization")
        default: false
        }
    }

    /// The further names (lowercase) that `Connection` values list: its tokens other than `close` and
    /// `keep-alive`. Usually none, and then nothing is allocated.
    static func listed(in connectionValues: [String]) -> [String] {
        var listed: [String] = []
        for value in connectionValues {
            for token in value.utf8.split(separator: UInt8(ascii: ",")) {
                let name = ASCII.trimmed(Substring(token))
                if name.isEmpty || ASCII.equalsIgnoringCase(name, "keep-alive") || ASCII.equalsIgnoringCase(name, "close") { continue }
                listed.append(ASCII.lowercased(String(name)))
            }
        }
        return listed
    }

    /// ``listed(in:)`` for a head read from the bytes (``AnswerHeadWriter``): the names its `Connection` fields list,
    /// as ranges of `bytes`.
    static func listed(_ bytes: UnsafeRawBufferPointer, in fields: [HeadField]) -> [Range<Int>] {
        var listed: [Range<Int>] = []
        forEachConnectionToken(bytes, in: fields) { token in
            if !HeadBytes.equalIgnoringCase(bytes, token, "close") && !HeadBytes.equalIgnoringCase(bytes, token, "keep-alive") {
                listed.append(token)
            }
        }
        return listed
    }

    /// Calls `body` with every token of the `Connection` fields of a head read from the bytes, `close` and
    /// `keep-alive` included, as ranges of `bytes` (blanks around them and empty items left out).
    static func forEachConnectionToken(_ bytes: UnsafeRawBufferPointer, in fields: [HeadField], _ body: (Range<Int>) -> Void) {
        for field in fields where HeadBytes.equalIgnoringCase(bytes, field.name, "connection") {
            var start = field.value.lowerBound
            for index in field.value.lowerBound...field.value.upperBound where index == field.value.upperBound || bytes[index] == UInt8(ascii: ",") {
                var token = start..<index
                start = index + 1
                while let first = token.first, HeadBytes.isBlank(bytes[first]) { token = token.dropFirst() }
                while let last = token.last, HeadBytes.isBlank(bytes[last]) { token = token.dropLast() }
                if !token.isEmpty { body(token) }
            }
        }
    }

    /// Whether `name` is hop-by-hop for a message whose `Connection` lists `listed` (from ``listed(in:)``).
    static func contains(_ name: String, listed: [String]) -> Bool {
        isFixed(name) || (!listed.isEmpty && listed.contains { ASCII.equalsIgnoringCase(name, $0) })
    }
}
