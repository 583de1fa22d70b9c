import BigInt
import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct BrowserIDCryptoTests {
    static func jws(_ text: String) throws -> BrowserIDJWS {
        try BrowserIDJWS(parsing: Substring(text), role: "test")
    }

    static func flipLastSignatureByte(_ jws: String) -> String {
        var parts = jws.split(separator: ".").map(String.init)
        var signature = Base64URL.decode(parts[2])!
        signature[signature.count - 1] ^= 0x01
        parts[2] = Base64URL.encode(signature)
        return parts.joined(separator: ".")
    }

    @Test("§7.6: get_keypair(\"login.persona.org\") gives the published x and y (DS128 group)")
    func personaKey() throws {
        let key = BrowserIDSigningKey.dsa128(seed: "login.persona.org")
        #expect(key.dsaPrivateExponentHex == BrowserIDVectors.personaX)
        #expect(key.publicKey["y"] == BrowserIDVectors.personaY)
        #expect(key.publicKey["q"] == "e21e04f911d1ed7991008ecaab3bf775984309c3")
        let parsed = try BrowserIDPublicKey(json: .object(key.publicKey.mapValues(JSONValue.string)), role: "key")
        guard case .dsa(let dsa) = parsed else {
            Issue.record("not DSA")
            return
        }
        #expect(dsa.algorithm == "DS128")
        #expect(dsa.componentByteCount == 20)
    }

    @Test("DS128 round trip: a signature verifies; a tampered signature, payload or key does not")
    func dsaRoundTrip() throws {
        let key = BrowserIDSigningKey.dsa128(seed: "login.persona.org")
        let verifier = try BrowserIDPublicKey(json: BrowserIDFixture.keyJSON(key), role: "key")
        let token = key.compactJWS(["aud": .string("http://rp"), "exp": .number(1)])
        try verifier.verify(try Self.jws(token), role: "assertion")

        #expect(throws: BrowserIDFailure.invalidSignature("the assertion's signature does not verify")) {
            try verifier.verify(try Self.jws(Self.flipLastSignatureByte(token)), role: "assertion")
        }
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Data(#"{"aud":"http://evil","exp":1}"#.utf8))
        #expect(throws: BrowserIDFailure.self) { try verifier.verify(try Self.jws(parts.joined(separator: ".")), role: "assertion") }
        let other = try BrowserIDPublicKey(json: BrowserIDFixture.keyJSON(BrowserIDFixture.otherKey), role: "key")
        #expect(throws: BrowserIDFailure.self) { try other.verify(try Self.jws(token), role: "assertion") }
    }

    @Test("DSA refuses r or s out of range (0, ≥ q) and wrong signature lengths")
    func dsaRanges() throws {
        let key = BrowserIDSigningKey.dsa128(seed: "x")
        guard case .dsa(let dsa) = try BrowserIDPublicKey(json: BrowserIDFixture.keyJSON(key), role: "key") else { return }
        let message = Data("m".utf8)
        let good = key.sign(message)
        #expect(dsa.isValidSignature(good, for: message))
        let q = dsa.q.serialize()
        let zero = Data(count: 20)
        #expect(!dsa.isValidSignature(zero + good.suffix(20), for: message))
        #expect(!dsa.isValidSignature(good.prefix(20) + zero, for: message))
        #expect(!dsa.isValidSignature(q + good.suffix(20), for: message))
        #expect(!dsa.isValidSignature(good.prefix(20) + q, for: message))
        #expect(!dsa.isValidSignature(good.dropLast(), for: message))
        #expect(!dsa.isValidSignature(good + Data([0]), for: message))
    }

    @Test("DS256: the §7.7 assertion's signature verifies with the DS256 key its certificate carries; tampered, it does not")
    func ds256Vector() throws {
        let backed = try BrowserIDBackedAssertion(parsing: BrowserIDVectors.expiredAssertion)
        let userKey = try BrowserIDPublicKey(json: try #require(backed.certificate.payload["public-key"]), role: "key")
        guard case .dsa(let dsa) = userKey else {
            Issue.record("not DSA")
            return
        }
        #expect(dsa.algorithm == "DS256")
        try userKey.verify(backed.assertion, role: "assertion")
        var tampered = backed.assertion.signature
        tampered[5] ^= 0x80
        #expect(!dsa.isValidSignature(tampered, for: backed.assertion.signingInput))
        #expect(!dsa.isValidSignature(backed.assertion.signature, for: backed.assertion.signingInput + Data("x".utf8)))
    }

    @Test("the header alg must fit the key: DS256 label on a DS128 key, RS on DSA, DS on RSA are refused")
    func algorithmMismatch() throws {
        let dsaKey = BrowserIDSigningKey.dsa128(seed: "x")
        let dsa = try BrowserIDPublicKey(json: BrowserIDFixture.keyJSON(dsaKey), role: "key")
        let token = dsaKey.compactJWS(["a": .number(1)])
        var parts = token.split(separator: ".").map(String.init)
        for alg in ["DS256", "RS256", "HS256", "none"] {
            parts[0] = Base64URL.encode(Data("{\"alg\":\"\(alg)\"}".utf8))
            #expect(throws: BrowserIDFailure.self) { try dsa.verify(try Self.jws(parts.joined(separator: ".")), role: "t") }
            let token = try Self.jws(parts.joined(separator: "."))
            do {
                try dsa.verify(token, role: "t")
            } catch {
                #expect(error.code == "unsupported_algorithm")
            }
        }
    }

    @Test("RS256 (2048-bit) and RS128/RS64 labels on a 1024-bit key verify as PKCS#1 v1.5 SHA-256; tampering fails")
    func rsa() throws {
        for bits in [2048, 1024] {
            let key = try BrowserIDSigningKey.rsa(bits: bits)
            #expect(key.algorithm == "RS256")
            let verifier = try BrowserIDPublicKey(json: BrowserIDFixture.keyJSON(key), role: "key")
            let token = key.compactJWS(["aud": .string("http://rp")])
            try verifier.verify(try Self.jws(token), role: "assertion")
            // The numeric label is ignored for RSA (implementations disagree on it).
            var parts = token.split(separator: ".").map(String.init)
            for label in ["RS64", "RS128"] {
                parts[0] = Base64URL.encode(Data("{\"alg\":\"\(label)\"}".utf8))
                let input = "\(parts[0]).\(parts[1])"
                let signed = "\(input).\(Base64URL.encode(key.sign(Data(input.utf8))))"
                try verifier.verify(try Self.jws(signed), role: "assertion")
            }
            #expect(throws: BrowserIDFailure.invalidSignature("the assertion's signature does not verify")) {
                try verifier.verify(try Self.jws(Self.flipLastSignatureByte(token)), role: "assertion")
            }
        }
    }

    @Test("RSA keys below 1024 bits (the 512-bit RS64 test size) are refused")
    func rsaTooSmall() throws {
        let n512 = (BigUInt(1) << 511) + 12345
        let json: JSONValue = .object(["algorithm": .string("RS"), "n": .string(String(n512)), "e": .string("65537")])
        #expect(throws: BrowserIDFailure.self) { try BrowserIDPublicKey(json: json, role: "key") }
        do {
            _ = try BrowserIDPublicKey(json: json, role: "key")
        } catch {
            #expect(error.code == "unsupported_algorithm")
            #expect(error.reason.contains("512-bit"))
        }
    }

    @Test("a short RSA signature (leading zero bytes dropped, as PyBrowserID's int2bytes does) is left-padded")
    func rsaShortSignature() throws {
        let key = try BrowserIDSigningKey.rsa(bits: 1024)
        guard case .rsa(let rsa) = try BrowserIDPublicKey(json: BrowserIDFixture.keyJSON(key), role: "key") else { return }
        var found = false
        for index in 0..<2000 {
            let message = Data("message \(index)".utf8)
            let signature = key.sign(message)
            guard signature.first == 0 else { continue }
            #expect(try rsa.isValidSignature(signature.dropFirst(), for: message))
            found = true
            break
        }
        #expect(found)
    }

    @Test("JWK-style keys (kty RSA, base64url n/e) are read too")
    func jwkKeys() throws {
        let key = try BrowserIDSigningKey.rsa(bits: 2048)
        let n = BigUInt(key.publicKey["n"]!)!
        let e = BigUInt(key.publicKey["e"]!)!
        let json: JSONValue = .object([
            "kty": .string("RSA"), "n": .string(Base64URL.encode(n.serialize())), "e": .string(Base64URL.encode(e.serialize())),
        ])
        let verifier = try BrowserIDPublicKey(json: json, role: "key")
        try verifier.verify(try Self.jws(key.compactJWS(["x": .number(1)])), role: "t")
    }
}
