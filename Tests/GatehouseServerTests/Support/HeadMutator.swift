/// Mutations of HTTP/1.1 heads for the readers' agreement tests: a byte replaced, inserted or removed, a letter's
/// case flipped, or a whole line added among the fields.
enum HeadMutator {
    /// Bytes that matter to a head's syntax: controls, line ends, blanks, the colon, delimiters, non-ASCII.
    static let interesting: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x3A, 0x7F, 0x80, 0xFF] + Array("\"<>{}#\\aA/,;=?%".utf8)

    /// One change to `bytes`; an added line is one of `lines`.
    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator, lines: [String]) {
        let at = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 5 {
        case 0: bytes[at] = interesting[Int(random.next() % UInt64(interesting.count))]
        case 1: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: at)
        case 2: bytes.remove(at: at)
        case 3: bytes[at] ^= (bytes[at] | 0x20) >= UInt8(ascii: "a") && (bytes[at] | 0x20) <= UInt8(ascii: "z") ? 0x20 : 0
        default:
            // After the first line break found from a random point, so that it lands among the fields.
            let lineStart = (bytes[at...].firstIndex(of: 0x0A) ?? bytes.count - 1) + 1
            bytes.insert(contentsOf: Array(lines[Int(random.next() % UInt64(lines.count))].utf8), at: min(lineStart, bytes.count))
        }
    }
}
