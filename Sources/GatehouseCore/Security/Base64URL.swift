public import Foundation

/// Base64url without padding (RFC 4648 §5), as JOSE and PKCE use it. Byte-level: it runs for every DPoP proof
/// and token hash, where Foundation's string replacing costs more than the decoding itself.
public enum Base64URL {
    public static func encode(_ data: Data) -> String {
        var bytes = Array(data.base64EncodedData())
        var length = bytes.count
        while length > 0, bytes[length - 1] == UInt8(ascii: "=") { length -= 1 }
        for index in 0..<length {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes[..<length], as: UTF8.self)
    }

    /// Decodes unpadded base64url; nil for anything else (`+`, `/`, `=` or other characters).
    public static func decode(_ text: String) -> Data? {
        decode(text.utf8)
    }

    /// The same over UTF-8 bytes (a part of a JWS, without making a `String` of it first).
    public static func decode(_ text: some Collection<UInt8>) -> Data? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                bytes.append(byte)
            case UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
            default: return nil
            }
        }
        // A length of 1 mod 4 is never valid base64; Foundation refuses it below.
        while bytes.count % 4 != 0 { bytes.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(bytes))
    }
}
