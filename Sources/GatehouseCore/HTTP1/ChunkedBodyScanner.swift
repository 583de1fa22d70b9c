/// Finds where a chunked body ends (RFC 9112 §7.1) in the bytes as they come, and which of them are the chunks'
/// data: what a relay needs to pass an answer on as bytes and keep its backend connection for the next one.
///
/// Like the head readers it takes a strict subset, and any other byte makes the body ``Step/invalid``: then nobody
/// can tell where the answer ends, and neither connection may carry another one.
/// - a chunk size of 1 to 15 hex digits, then extensions (each `;` name, or `;` name `=` value, both tokens: no
///   quoted values, no blanks), then CR LF;
/// - that many bytes of data, then CR LF;
/// - the last chunk (size 0) then CR LF at once: no trailer fields.
public struct ChunkedBodyScanner: Sendable {
    /// Where a ``scan(_:data:)`` stopped.
    public enum Step: Equatable, Sendable {
        /// Every byte given belongs to the body; it goes on.
        case needMore
        /// The body ends before this index of the bytes given: the rest is not the body's.
        case ended(at: Int)
        case invalid
    }

    private enum State: Sendable {
        case size(value: Int, digits: Int)
        /// In an extension's name or value: how many bytes of it so far.
        case extensionName(value: Int, length: Int)
        case extensionValue(value: Int, length: Int)
        case data(left: Int)
        /// A CR LF is due (its CR already read: `sawCR`), then `next`.
        case lineEnd(sawCR: Bool, next: AfterLine)
        case ended
        case invalid
    }

    /// What follows a line's CR LF.
    private enum AfterLine: Sendable {
        /// A chunk's data, after its size line.
        case data(left: Int)
        /// The next chunk's size, after a chunk's data.
        case size
        /// The empty line that ends the body, after the last chunk's size line (no trailer section).
        case emptyLine
        /// Nothing: the body ends.
        case end
    }

    private var state = State.size(value: 0, digits: 0)

    public init() {}

    /// Scans the body's next bytes; `data` gets the ranges of `bytes` that are chunk data, in order.
    public mutating func scan(_ bytes: UnsafeRawBufferPointer, data: (Range<Int>) -> Void) -> Step {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch state {
            case .size(let value, let digits):
                if let digit = Self.hexValue(byte) {
                    guard digits < 15 else { return fail() }
                    state = .size(value: value << 4 | digit, digits: digits + 1)
                } else if digits > 0, byte == UInt8(ascii: ";") {
                    state = .extensionName(value: value, length: 0)
                } else if digits > 0, byte == HeadBytes.cr {
                    state = Self.afterSizeLine(value)
                } else {
                    return fail()
                }
                index += 1
            case .extensionName(let value, let length), .extensionValue(let value, let length):
                let inName = if case .extensionName = state { true } else { false }
                if HeadBytes.isTokenByte(byte) {
                    state = inName ? .extensionName(value: value, length: length + 1) : .extensionValue(value: value, length: length + 1)
                } else if length > 0, byte == UInt8(ascii: ";") {
                    state = .extensionName(value: value, length: 0)
                } else if length > 0, inName, byte == UInt8(ascii: "=") {
                    state = .extensionValue(value: value, length: 0)
                } else if length > 0, byte == HeadBytes.cr {
                    state = Self.afterSizeLine(value)
                } else {
                    return fail()
                }
                index += 1
            case .data(let left):
                let count = min(left, bytes.count - index)
                data(index..<index + count)
                index += count
                state = left == count ? .lineEnd(sawCR: false, next: .size) : .data(left: left - count)
            case .lineEnd(let sawCR, let next):
                guard byte == (sawCR ? HeadBytes.lf : HeadBytes.cr) else { return fail() }
                index += 1
                guard sawCR else {
                    state = .lineEnd(sawCR: true, next: next)
                    continue
                }
                switch next {
                case .data(let left): state = .data(left: left)
                case .size: state = .size(value: 0, digits: 0)
                case .emptyLine: state = .lineEnd(sawCR: false, next: .end)
                case .end:
                    state = .ended
                    return .ended(at: index)
                }
            case .ended:
                return .ended(at: 0)
            case .invalid:
                return .invalid
            }
        }
        switch state {
        case .ended: return .ended(at: 0)
        case .invalid: return .invalid
        default: return .needMore
        }
    }

    /// The state once a size line's CR is read: its LF, then the chunk's data, or for the last chunk the empty line.
    private static func afterSizeLine(_ size: Int) -> State {
        .lineEnd(sawCR: true, next: size == 0 ? .emptyLine : .data(left: size))
    }

    private mutating func fail() -> Step {
        state = .invalid
        return .invalid
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}
