import Foundation
import GatehouseCore
import Testing

@Suite struct RandomTokenTests {
    @Test("32 random bytes make 43 base64url characters without padding")
    func defaultLength() throws {
        let token = RandomToken.make()
        #expect(token.count == 43)
        #expect(!token.contains("="))
        #expect(token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        let bytes = try #require(Base64URL.decode(token))
        #expect(bytes.count == 32)
    }

    @Test("the byte count sets the length: 16 bytes make 22 characters")
    func customLength() throws {
        let token = RandomToken.make(byteCount: 16)
        #expect(token.count == 22)
        #expect(try #require(Base64URL.decode(token)).count == 16)
    }

    @Test("tokens are distinct")
    func distinct() {
        let tokens = Set((0..<500).map { _ in RandomToken.make() })
        #expect(tokens.count == 500)
    }

    @Test("hash is the lowercase hex SHA-256 of the UTF-8 secret (FIPS 180-2 'abc' vector)")
    func hashOfABC() {
        #expect(RandomToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("hash of the empty string is the SHA-256 of no bytes")
    func hashOfEmpty() {
        #expect(RandomToken.hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("hash is 64 lowercase hex characters and deterministic")
    func hashShape() {
        let token = RandomToken.make()
        let hash = RandomToken.hash(token)
        #expect(hash.count == 64)
        #expect(hash.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(RandomToken.hash(token) == hash)
        #expect(RandomToken.hash(token + "x") != hash)
        #expect(!hash.contains(token))
    }
}
