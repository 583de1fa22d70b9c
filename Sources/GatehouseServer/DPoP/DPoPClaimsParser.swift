/// Reads a DPoP proof's claims (one JSON object) straight from its bytes into ``DPoPProofParts/Claims``: a proof
/// is parsed on every request of a bound session, and a general JSON decoder costs more than the rest of the
/// claim checks together.
///
/// Strict JSON (RFC 8259): one object, nothing but white space around it, no trailing commas, strings valid
/// UTF-8 without control characters, escapes checked. The members the checks read must have their type (`iat`
/// a number, the others strings; `null` counts as absent, as with a typed decode); a member named twice makes
/// the proof malformed, so no two readers can disagree about which one counts. Other members may hold any JSON
/// value, nested at most ``maximumDepth`` deep.
enum DPoPClaimsParser {
    static let maximumDepth = 16

    /// The claims, or `nil` when `bytes` is not such an object.
    static func parse(_ bytes: [UInt8]) -> DPoPProofParts.Claims? {
        var reader = Reader(bytes: bytes)
        return reader.claims()
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func claims() -> DPoPProofParts.Claims? {
            var jti: String?
            var htm: String?
            var htu: String?
            var iat: Double?
            var ath: String?
            var nonce: String?
            // Members seen: the claims read by bit (a proof usually has no other, and then no set is made).
            var seenClaims: UInt8 = 0
            var seenOthers: Set<String> = []
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            skipSpace()
            if !take(UInt8(ascii: "}")) {
                repeat {
                    skipSpace()
                    guard let name = memberName() else { return nil }
                    switch name {
                    case .claim(let claim):
                        guard seenClaims & claim.rawValue == 0 else { return nil }
                        seenClaims |= claim.rawValue
                    case .other(let text):
                        guard seenOthers.insert(text).inserted else { return nil }
                    }
                    skipSpace()
                    guard take(UInt8(ascii: ":")) else { return nil }
                    skipSpace()
                    switch name {
                    case .claim(.iat):
                        if !takeNull() {
                            guard let value = number() else { return nil }
                            iat = value
                        }
                    case .claim(let claim):
                        var value: String?
                        if !takeNull() {
                            guard let text = string() else { return nil }
                            value = text
                        }
                        switch claim {
                        case .jti: jti = value
                        case .htm: htm = value
                        case .htu: htu = value
                        case .ath: ath = value
                        case .nonce, .iat: nonce = value
                        }
                    case .other:
                        guard skipValue(depth: 1) else { return nil }
                    }
                    skipSpace()
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            guard index == bytes.count else { return nil }
            return DPoPProofParts.Claims(jti: jti, htm: htm, htu: htu, iat: iat, ath: ath, nonce: nonce)
        }

        /// A claim the checks read, by its bit among the members seen.
        private enum Claim: UInt8 {
            case jti = 1
            case htm = 2
            case htu = 4
            case iat = 8
            case ath = 16
            case nonce = 32

            /// The claim named by these bytes (a name's unescaped text), if any: its length and its bytes packed
            /// into an integer, compared with the claims' own.
            init?(named name: some Collection<UInt8>) {
                let count = name.count
                guard count == 3 || count == 5 else { return nil }
                var packed: UInt64 = 0
                for byte in name { packed = packed << 8 | UInt64(byte) }
                switch (count, packed) {
                case (3, 0x6A_74_69): self = .jti  // "jti"
                case (3, 0x68_74_6D): self = .htm  // "htm"
                case (3, 0x68_74_75): self = .htu  // "htu"
                case (3, 0x69_61_74): self = .iat  // "iat"
                case (3, 0x61_74_68): self = .ath  // "ath"
                case (5, 0x6E_6F_6E_63_65): self = .nonce  // "nonce"
                default: return nil
                }
            }
        }

        /// A member's name: a claim the checks read, or any other by its text.
        private enum Name {
            case claim(Claim)
            case other(String)
        }

        /// The member name at the cursor; `nil` when malformed. A name without escapes is matched as bytes, so
        /// the usual members make no string; an escaped spelling of a claim's name is still that claim.
        private mutating func memberName() -> Name? {
            if next == UInt8(ascii: "\""),
                let end = bytes[(index + 1)...].firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }),
                bytes[end] == UInt8(ascii: "\""), let claim = Claim(named: bytes[(index + 1)..<end])
            {
                index = end + 1
                return .claim(claim)
            }
            guard let text = string() else { return nil }
            return Claim(named: text.utf8).map(Name.claim) ?? .other(text)
        }

        // MARK: Tokens

        private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard next == byte else { return false }
            index += 1
            return true
        }

        private mutating func take(literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
            index += count
            return true
        }

        private mutating func takeNull() -> Bool { take(literal: "null") }

        private mutating func skipSpace() {
            while let byte = next, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// A string at the cursor, unescaped; `nil` when malformed.
        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            // The common case: no escape, the bytes are the value.
            while let byte = next, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { return nil }
                index += 1
            }
            guard let stop = next else { return nil }
            if stop == UInt8(ascii: "\"") {
                index += 1
                return Self.text(bytes[start..<index - 1])
            }
            var decoded = Array(bytes[start..<index])
            while let byte = next {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(validating: decoded, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = next else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        decoded.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0..<0x20: return nil
                default: decoded.append(byte)
                }
            }
            return nil
        }

        /// The UTF-8 text of `bytes`, `nil` unless valid. ASCII (every claim a client sends) is taken as it is,
        /// without the validating decoder's generic path.
        private static func text(_ bytes: ArraySlice<UInt8>) -> String? {
            bytes.withUnsafeBufferPointer { buffer in
                buffer.allSatisfy { $0 < 0x80 } ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
            }
        }

        /// The scalar of a `\u` escape (the `\u` read), a surrogate pair joined; `nil` for a lone surrogate.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(high) {
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            }
            return Unicode.Scalar(high)
        }

        private mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// A number at the cursor; `nil` when malformed or not finite. An integer of at most 15 digits (an `iat`)
        /// is exact in a `Double` and read digit by digit; any other through the standard library's parser.
        private mutating func number() -> Double? {
            let start = index
            guard skipNumber() else { return nil }
            let digits = bytes[start..<index]
            if digits.count <= 15, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                return Double(digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) })
            }
            guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite else { return nil }
            return value
        }

        /// Past a number (RFC 8259 §6 grammar); `false` when malformed.
        private mutating func skipNumber() -> Bool {
            _ = take(UInt8(ascii: "-"))
            if !take(UInt8(ascii: "0")) {
                guard let first = next, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first) else { return false }
                skipDigits()
            }
            if take(UInt8(ascii: ".")) {
                guard digitsFollow() else { return false }
                skipDigits()
            }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard digitsFollow() else { return false }
                skipDigits()
            }
            return true
        }

        private func digitsFollow() -> Bool { next.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }

        private mutating func skipDigits() {
            while digitsFollow() { index += 1 }
        }

        /// Past any JSON value; `false` when malformed or nested deeper than ``DPoPClaimsParser/maximumDepth``.
        private mutating func skipValue(depth: Int) -> Bool {
            guard depth <= DPoPClaimsParser.maximumDepth, let byte = next else { return false }
            switch byte {
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "t"): return take(literal: "true")
            case UInt8(ascii: "f"): return take(literal: "false")
            case UInt8(ascii: "n"): return takeNull()
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                let object = byte == UInt8(ascii: "{")
                let close = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipSpace()
                if take(close) { return true }
                repeat {
                    skipSpace()
                    if object {
                        guard string() != nil else { return false }
                        skipSpace()
                        guard take(UInt8(ascii: ":")) else { return false }
                        skipSpace()
                    }
                    guard skipValue(depth: depth + 1) else { return false }
                    skipSpace()
                } while take(UInt8(ascii: ","))
                return take(close)
            default: return skipNumber()
            }
        }
    }
}
