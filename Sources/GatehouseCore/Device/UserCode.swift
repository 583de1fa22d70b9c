import Foundation

/// The code a person types on the device page (RFC 8628 §6.1): 8 characters from 20 consonants, shown as
/// `XXXX-XXXX`. No vowels (no words), no digits or look-alikes; 20^8 ≈ 2.6·10^10 codes, which with five wrong
/// tries per browser per minute and a ten-minute lifetime leaves guessing hopeless.
public enum UserCode {
    /// The characters a user code is made of.
    public static let alphabet: [Character] = Array("BCDFGHJKLMNPQRSTVWXZ")
    /// Characters in a code, without the dash.
    public static let length = 8

    /// A fresh code in its displayed form, `XXXX-XXXX`.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        // 20 divides 240 evenly: bytes at or above 240 are drawn again, so every character is equally likely.
        var characters: [Character] = []
        while characters.count < length {
            let byte = UInt8.random(in: 0...255, using: &generator)
            if byte < 240 { characters.append(alphabet[Int(byte) % alphabet.count]) }
        }
        return display(String(characters))
    }

    /// `BCDFGHJK` as `BCDF-GHJK`.
    public static func display(_ normalized: String) -> String {
        String(normalized.prefix(4)) + "-" + String(normalized.dropFirst(4))
    }

    /// The code as typed (any case, with or without the dash, with spaces) in its canonical form, eight
    /// characters of ``alphabet``; nil when it cannot be a user code.
    public static func normalize(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        let kept = typed.uppercased().filter { $0 != "-" && !$0.isWhitespace }
        guard kept.count == length, kept.allSatisfy(alphabet.contains) else { return nil }
        return kept
    }

    /// The key a normalized code is stored under (never the code itself).
    public static func hash(_ normalized: String) -> String {
        RandomToken.hash("device-user-code:" + normalized)
    }
}
