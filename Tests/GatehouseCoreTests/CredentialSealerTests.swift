import Foundation
import GatehouseCore
import Testing

@Suite struct CredentialSealerTests {
    static let k1 = CredentialSealer.Key(id: "k1", bytes: Data(repeating: 0x11, count: 32))
    static let k2 = CredentialSealer.Key(id: "k2", bytes: Data(repeating: 0x22, count: 32))
    static let token = "ya29.a0AfH6SMB-secret-access-token"

    @Test("what is sealed opens to the same bytes")
    func roundTrip() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        let sealed = try sealer.seal(Data(Self.token.utf8))
        #expect(try sealer.open(sealed) == Data(Self.token.utf8))
    }

    @Test("a Codable credential round-trips through seal(json:) and open(json:from:)")
    func jsonRoundTrip() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        let credential = Credential(
            accessToken: Self.token, tokenType: "bearer", refreshToken: "refresh-1",
            expiresAt: Date(timeIntervalSince1970: 1_700_003_600), issuedAt: Date(timeIntervalSince1970: 1_700_000_000),
            scope: ["read", "write"], extras: ["user_id": "938029"])
        let sealed = try sealer.seal(json: credential)
        #expect(try sealer.open(json: Credential.self, from: sealed) == credential)
    }

    @Test("the sealed bytes contain neither the plaintext token nor the key")
    func ciphertextHidesPlaintext() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        let sealed = try sealer.seal(Data(Self.token.utf8))
        #expect(sealed.range(of: Data(Self.token.utf8)) == nil)
        #expect(sealed.range(of: Data("secret".utf8)) == nil)
        #expect(sealed.range(of: Self.k1.bytes) == nil)
    }

    @Test("sealing the same plaintext twice gives different bytes (fresh nonce)")
    func freshNonce() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        let plaintext = Data(Self.token.utf8)
        #expect(try sealer.seal(plaintext) != sealer.seal(plaintext))
    }

    @Test("changing any single byte after the key id makes opening fail")
    func tamperingFails() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        let sealed = try sealer.seal(Data(Self.token.utf8))
        let headerLength = 2 + Self.k1.id.utf8.count
        for index in headerLength..<sealed.count {
            var tampered = sealed
            tampered[tampered.startIndex + index] ^= 0x01
            #expect(throws: (any Error).self, "byte \(index)") { try sealer.open(tampered) }
        }
    }

    @Test("a truncated sealed value does not open")
    func truncatedFails() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        let sealed = try sealer.seal(Data(Self.token.utf8))
        #expect(throws: (any Error).self) { try sealer.open(sealed.dropLast()) }
        #expect(throws: CredentialSealer.SealError.malformed) { try sealer.open(Data()) }
        #expect(throws: CredentialSealer.SealError.malformed) { try sealer.open(sealed.prefix(2 + Self.k1.id.utf8.count)) }
    }

    @Test("an unknown format version is malformed")
    func unknownVersion() throws {
        let sealer = try CredentialSealer(keys: [Self.k1])
        var sealed = try sealer.seal(Data(Self.token.utf8))
        sealed[sealed.startIndex] = 2
        #expect(throws: CredentialSealer.SealError.malformed) { try sealer.open(sealed) }
    }

    @Test("the first key seals; after rotation to [k2, k1] values sealed with k1 still open")
    func rotationOpensOldValues() throws {
        let old = try CredentialSealer(keys: [Self.k1])
        let sealedWithK1 = try old.seal(Data(Self.token.utf8))

        let rotated = try CredentialSealer(keys: [Self.k2, Self.k1])
        #expect(rotated.currentKeyID == "k2")
        #expect(try rotated.open(sealedWithK1) == Data(Self.token.utf8))

        let sealedWithK2 = try rotated.seal(Data(Self.token.utf8))
        #expect(throws: CredentialSealer.SealError.unknownKey("k2")) { try old.open(sealedWithK2) }
    }

    @Test("a sealer without the sealing key fails with unknownKey naming that key")
    func unknownKey() throws {
        let sealedWithK1 = try CredentialSealer(keys: [Self.k1]).seal(Data(Self.token.utf8))
        let withoutK1 = try CredentialSealer(keys: [Self.k2])
        #expect(throws: CredentialSealer.SealError.unknownKey("k1")) { try withoutK1.open(sealedWithK1) }
    }

    @Test("a key with the right id but different bytes cannot open")
    func sameIDDifferentBytes() throws {
        let sealed = try CredentialSealer(keys: [Self.k1]).seal(Data(Self.token.utf8))
        let impostor = try CredentialSealer(keys: [.init(id: "k1", bytes: Data(repeating: 0x33, count: 32))])
        #expect(throws: (any Error).self) { try impostor.open(sealed) }
    }

    @Test(
        "a key id longer than 255 UTF-8 bytes is rejected when the sealer is made, not at the first seal")
    func overlongKeyID() {
        let id = String(repeating: "k", count: 256)
        #expect(throws: (any Error).self) {
            try CredentialSealer(keys: [.init(id: id, bytes: Data(repeating: 1, count: 32))])
        }
    }

    @Test("keys that are not 32 bytes are rejected, naming the key", arguments: [0, 16, 31, 33, 64])
    func wrongKeyLength(count: Int) {
        #expect(throws: CredentialSealer.SealError.invalidKeyLength("short")) {
            try CredentialSealer(keys: [Self.k1, .init(id: "short", bytes: Data(repeating: 1, count: count))])
        }
    }
}
