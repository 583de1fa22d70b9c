import GatehouseCore

/// The implicit types of plain scalars in the YAML 1.2 core schema (§10.3.2): booleans, integers (decimal,
/// `0x`, `0o`) and floats (with `.inf`, `.nan`).
///
/// A scanner over the UTF-8 bytes rather than regular expressions: Yams's own resolver compiles
/// `NSRegularExpression`s (ICU) and Swift `Regex` loads the string-processing runtime, which together kept
/// several megabytes of library pages resident in every gateway for the sake of reading its configuration.
enum YAMLCoreSchema {
    /// The implicit type of a plain scalar, or `nil` for a string.
    static func implicitType(of text: String) -> ConfigNode.ImplicitType? {
        switch text {
        case "true", "True", "TRUE", "false", "False", "FALSE": return .boolean
        default: break
        }
        let bytes = Array(text.utf8)
        return isInteger(bytes[...]) || isFloat(bytes[...]) ? .number : nil
    }

    /// `[-+]?[0-9]+ | 0x[0-9a-fA-F]+ | 0o[0-7]+`
    static func isInteger(_ bytes: ArraySlice<UInt8>) -> Bool {
        if bytes.starts(with: Array("0x".utf8)) { return all(bytes.dropFirst(2), isHexDigit) }
        if bytes.starts(with: Array("0o".utf8)) { return all(bytes.dropFirst(2)) { (0x30...0x37).contains($0) } }
        return all(droppingSign(bytes), isDigit)
    }

    /// `[-+]?(\.[0-9]+ | [0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)`
    static func isFloat(_ bytes: ArraySlice<UInt8>) -> Bool {
        if [".nan", ".NaN", ".NAN"].contains(where: { bytes.elementsEqual($0.utf8) }) { return true }
        var rest = droppingSign(bytes)
        if [".inf", ".Inf", ".INF"].contains(where: { rest.elementsEqual($0.utf8) }) { return true }
        let integerDigits = rest.prefix(while: isDigit).count
        rest = rest.dropFirst(integerDigits)
        var fractionDigits = 0
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            fractionDigits = rest.prefix(while: isDigit).count
            rest = rest.dropFirst(fractionDigits)
        } else if integerDigits == 0 {
            return false
        }
        // `.` alone has no digit; `.5` needs the fraction's, `5.` has the integer's.
        guard integerDigits + fractionDigits > 0 else { return false }
        if let exponent = rest.first, exponent == UInt8(ascii: "e") || exponent == UInt8(ascii: "E") {
            return all(droppingSign(rest.dropFirst()), isDigit)
        }
        return rest.isEmpty
    }

    private static func droppingSign(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") ? bytes.dropFirst() : bytes
    }

    /// At least one byte, and every byte passes.
    private static func all(_ bytes: ArraySlice<UInt8>, _ test: (UInt8) -> Bool) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(test)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
