import Foundation
import Testing

@testable import GatehouseServer

/// The proof claims parser against well-formed and malformed JSON: every claim missing or of another type, bad
/// syntax, duplicate members, escapes, nesting.
struct DPoPClaimsParserTests {
    static func parse(_ text: String) -> DPoPProofParts.Claims? {
        DPoPClaimsParser.parse(Array(text.utf8))
    }

    static let full = #"{"jti":"j1","htm":"GET","htu":"http://a/x","iat":1800000000,"ath":"h","nonce":"n"}"#

    @Test func readsEveryClaim() throws {
        let claims = try #require(Self.parse(Self.full))
        #expect(claims == DPoPProofParts.Claims(jti: "j1", htm: "GET", htu: "http://a/x", iat: 1_800_000_000, ath: "h", nonce: "n"))
        // White space, other members of every JSON type, member order.
        let spaced = try #require(
            Self.parse(
                " \n{ \"x\" : [1, -2.5e+3, true, false, null, {\"a\": [\"b\"]}], \"iat\" : 1.5 , \"jti\":\"j\", \"o\": {}, \"e\": [] }\t"))
        #expect(spaced.iat == 1.5 && spaced.jti == "j" && spaced.htm == nil)
        #expect(Self.parse("{}") == DPoPProofParts.Claims(jti: nil, htm: nil, htu: nil, iat: nil, ath: nil, nonce: nil))
        // null is absent, as with a typed decode.
        #expect(Self.parse(#"{"jti":null,"iat":null}"#)?.jti == nil)
    }

    @Test func unescapesStrings() {
        #expect(Self.parse(#"{"jti":"a\"b\\c\/d\n\t\b\f\r"}"#)?.jti == "a\"b\\c/d\n\t\u{8}\u{c}\r")
        #expect(Self.parse(#"{"jti":"\u00e9\u20AC\ud83d\ude00"}"#)?.jti == "é€😀")
        #expect(Self.parse(#"{"h\u0074m":"GET"}"#)?.htm == "GET", "an escaped member name is the same name")
        #expect(Self.parse("{\"jti\":\"é\"}")?.jti == "é")
    }

    @Test(arguments: ["jti", "htm", "htu", "ath", "nonce"])
    func aStringClaimOfAnotherTypeIsMalformed(name: String) {
        for value in ["1", "true", "[]", "{}", "[\"a\"]"] {
            #expect(Self.parse("{\"\(name)\":\(value)}") == nil, "\(name): \(value)")
        }
    }

    @Test func iatMustBeANumber() {
        for value in ["\"1800000000\"", "true", "[]", "{}", "1e999", "01", "1.", ".5", "-", "+1", "0x10", "1e", "NaN", "Infinity"] {
            #expect(Self.parse("{\"iat\":\(value)}") == nil, "iat: \(value)")
        }
        #expect(Self.parse(#"{"iat":-0.5E-2}"#)?.iat == -0.005)
    }

    @Test func integersAreReadAsTheStandardLibraryReadsThem() {
        // Up to 15 digits are read digit by digit; longer ones, fractions and signs by the standard library.
        for text in ["0", "7", "1800000000", "999999999999999", "1000000000000000", "9007199254740993", "-1800000000", "123456789012345678901234"] {
            #expect(Self.parse("{\"iat\":\(text)}")?.iat == Double(text), "\(text)")
        }
    }

    @Test func aMemberNamedTwiceIsMalformed() {
        #expect(Self.parse(#"{"jti":"a","jti":"b"}"#) == nil)
        #expect(Self.parse(#"{"jti":"a","j\u0074i":"b"}"#) == nil)
        #expect(Self.parse(#"{"x":1,"x":2}"#) == nil)
        // Every claim the checks read, named twice among others, with either value type or null.
        for name in ["jti", "htm", "htu", "ath", "nonce", "iat"] {
            let value = name == "iat" ? "1" : "\"v\""
            #expect(Self.parse("{\"\(name)\":\(value),\"x\":1,\"\(name)\":null}") == nil, "\(name)")
            #expect(Self.parse("{\"\(name)\":null,\"\(name)\":\(value)}") == nil, "\(name)")
        }
        #expect(Self.parse(#"{"x":1,"jti":"a","y":2,"x":3}"#) == nil)
        // An escaped spelling of a claim's name is that claim, read and counted as such.
        let escaped = Self.parse(#"{"j\u0074i":"a","\u0068tm":"GET","ht\u0075":"u","\u0069at":2,"at\u0068":"h","n\u006fnce":"n"}"#)
        #expect(escaped == DPoPProofParts.Claims(jti: "a", htm: "GET", htu: "u", iat: 2, ath: "h", nonce: "n"))
        // Names that only look alike are different members (the same letters after NULs, a prefix, a longer name).
        #expect(Self.parse(#"{"jti":"a","\u0000\u0000jti":"b","jt":"c","jtii":"d","nonc":"e","nonces":"f"}"#)?.jti == "a")
        // Names that only look alike are different members.
        #expect(Self.parse(#"{"jti":"a","JTI":"b","jti ":"c"}"#)?.jti == "a")
    }

    @Test func badSyntaxIsMalformed() {
        let cases = [
            "", " ", "[]", "\"jti\"", "null", "{", "}", "{\"jti\":\"a\"", "{\"jti\":\"a\",}", "{,}", "{\"jti\" \"a\"}", "{\"jti\":}",
            "{jti:\"a\"}", "{'jti':'a'}", "{\"jti\":\"a\"}}", "{\"jti\":\"a\"} x", "{\"jti\":\"a\"}{}", "{\"jti\":\"a\" \"htm\":\"b\"}",
            "{\"x\":[1,]}", "{\"x\":[1 2]}", "{\"x\":{\"a\"}}", "{\"x\":tru}", "{\"x\":nul}", "{\"x\":True}", "{\"jti\":\"a\u{0}\"}",
            "{\"jti\":\"tab\there\"}", "{\"jti\":\"line\nbreak\"}", "{\"jti\":\"\\x\"}", "{\"jti\":\"\\u12\"}", "{\"jti\":\"\\uzzzz\"}",
            "{\"jti\":\"\\ud83d\"}", "{\"jti\":\"\\ude00\"}", "{\"jti\":\"\\ud83d\\u0041\"}", "{\"jti\":\"unterminated}",
        ]
        for text in cases { #expect(Self.parse(text) == nil, "\(text.debugDescription)") }
    }

    @Test func invalidUTF8IsMalformed() {
        for bytes: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] {
            #expect(DPoPClaimsParser.parse(Array("{\"jti\":\"".utf8) + bytes + Array("\"}".utf8)) == nil, "\(bytes)")
        }
    }

    @Test func nestingIsBounded() {
        let depth = DPoPClaimsParser.maximumDepth
        let fits = "{\"x\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        #expect(Self.parse(fits) != nil)
        let deep = "{\"x\":" + String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1) + "}"
        #expect(Self.parse(deep) == nil)
        #expect(Self.parse("{\"x\":" + String(repeating: "[", count: 100_000) + "}") == nil)
    }

    @Test func agreesWithJSONSerializationOnWhatItAccepts() throws {
        // The members as JSONSerialization reads them, for a proof a client library would write.
        let object: [String: Any] = ["jti": "Zm9v/+=", "htm": "POST", "htu": "https://gw.example/v1/session?q", "iat": 1_800_000_001, "ath": "é\"\\"]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let claims = try #require(DPoPClaimsParser.parse(Array(data)))
        #expect(claims.jti == "Zm9v/+=" && claims.htm == "POST" && claims.htu == "https://gw.example/v1/session?q")
        #expect(claims.iat == 1_800_000_001 && claims.ath == "é\"\\" && claims.nonce == nil)
    }
}
