import Foundation
import GatehouseCore
import Testing

@Suite struct Base64URLTests {
    @Test("encoding uses - and _ instead of + and / and drops padding")
    func encodeAlphabet() {
        #expect(Base64URL.encode(Data([0xfb, 0xff, 0xbf])) == "-_-_")
        #expect(Base64URL.encode(Data([0x61])) == "YQ")
    }

    @Test("encoding answers as Foundation's base64 encoder does, for every length, with the url alphabet and no padding")
    func encodeAgreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for count in 0..<70 {
            for _ in 0..<20 {
                let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
                let reference = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                #expect(Base64URL.encode(data) == reference)
                #expect(Base64URL.encode(Array(data)) == reference)
            }
        }
    }

    @Test("decoding into bytes answers as decoding into Data does, for text in a string or not")
    func decodedBytesAgree() {
        for text in ["", "YQ", "YWI", "YWJj", "-_-_", "QR", "Y", "a+bc", "YQ==", "not*base64", "8J-YgA"] {
            #expect(Base64URL.decodedBytes(text.utf8) == Base64URL.decode(text).map(Array.init), "\(text)")
            #expect(Base64URL.decodedBytes(Array(text.utf8)) == Base64URL.decode(text).map(Array.init), "\(text)")
            // A slice of a string's bytes, as a proof's parts are read.
            let framed = "." + text + "."
            let inner = framed.utf8.dropFirst().dropLast()
            #expect(Base64URL.decodedBytes(inner) == Base64URL.decode(text).map(Array.init), "\(text)")
        }
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

    @Test("a character outside the alphabet is refused wherever it stands: in a group of four or among the last ones")
    func refusesAnywhere() {
        let valid = Array(Base64URL.encode(Data(0..<16)).utf8)
        #expect(valid.count == 22)
        for position in valid.indices {
            for bad in ["*", "=", "+", "/", " ", "\u{80}"] {
                var text = valid
                text[position] = Array(bad.utf8)[0]
                #expect(Base64URL.decode(text) == nil, "\(bad) at \(position)")
                #expect(Base64URL.decodedBytes(text) == nil, "\(bad) at \(position)")
            }
        }
        #expect(Base64URL.decode(valid) == Data(0..<16))
    }

    @Test("every byte value is taken in a group of four exactly when it is in the alphabet, with its value")
    func everyByteInAGroup() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for byte in UInt8.min...UInt8.max {
            for position in 0..<4 {
                var text = Array("AAAA".utf8)
                text[position] = byte
                let decoded = Base64URL.decodedBytes(text)
                if let value = alphabet.firstIndex(of: byte) {
                    let group = UInt32(value) << (6 * UInt32(3 - position))
                    #expect(decoded == [UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)], "\(byte) at \(position)")
                } else {
                    #expect(decoded == nil, "\(byte) at \(position)")
                }
            }
        }
    }
}
