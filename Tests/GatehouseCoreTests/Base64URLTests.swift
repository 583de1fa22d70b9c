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
}
