import Foundation
import GatehouseCore
import Testing

@Suite struct Base64URLTests {
    @Test("encoding uses - and _ instead of + and / and drops padding")
    func encodeAlphabet() {
        #expect(Base64URL.encode(Data([0xfb, 0xff, 0xbf])) == "-_-_")
        #expect(Base64URL.encode(Data([0x61])) == "YQ")
    }

    @Test("decoding accepts unpadded input and round-trips")
    func decodeRoundTrip() {
        for count in 0..<40 {
            let data = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) })
            #expect(Base64URL.decode(Base64URL.encode(data)) == data)
        }
    }

    @Test("decoding refuses characters outside the alphabet")
    func decodeRefusesGarbage() {
        #expect(Base64URL.decode("not*base64") == nil)
        // Plain base64's characters and padding are not base64url.
        for text in ["a+bc", "a/bc", "YQ==", "YQ=", "Y"] { #expect(Base64URL.decode(text) == nil, "\(text)") }
    }

    @Test("decoding answers as Foundation's base64 decoder does, for every length and alphabet character")
    func decodeAgreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for _ in 0..<2000 {
            let count = Int.random(in: 0...48, using: &generator)
            let text = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            var padded = text.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
            while padded.count % 4 != 0 { padded.append(UInt8(ascii: "=")) }
            let reference = count % 4 == 1 ? nil : Data(base64Encoded: Data(padded))
            #expect(Base64URL.decode(text) == reference, "\(String(decoding: text, as: UTF8.self))")
        }
        // Unused bits of the last character are not looked at (as Foundation's decoder does).
        #expect(Base64URL.decode("QR") == Data([0x41]))
        #expect(Base64URL.decode("QQ") == Data([0x41]))
    }
}
