import Crypto
import Foundation
import GatehouseCore
import GatehouseStore
import Testing

@testable import GatehouseServer

/// The DPoP proof checks of RFC 9449 §4.3, one attack per test, on a memory store. The proofs are composed
/// here with swift-crypto; the interop tests (Tests/Interop/test_dpop_interop.py) use an independent client.
@Suite("DPoP proofs")
struct DPoPVerifierTests {
    static let publicURL = "http://gw.example:8080"
    static let target = DPoPVerifier.Target(method: "GET", url: publicURL + "/v1/api/x")
    static let token = "session-token"

    let clock = TestClock()
    let store = MemorySessionStore()

    func verifier(_ policy: DPoPPolicy = DPoPPolicy()) -> DPoPVerifier {
        DPoPVerifier(
            policy: policy, publicURL: Self.publicURL, store: store, clock: clock.source,
            sealingKeys: [.init(id: "k1", bytes: Data(repeating: 7, count: 32))])
    }

    /// A proof as a client makes it; `edit` changes the header or claims before signing.
    static func proof(
        key: P256.Signing.PrivateKey, signer: P256.Signing.PrivateKey? = nil, method: String = "GET", url: String = publicURL + "/v1/api/x",
        iat: Date = Date(), token: String? = Self.token, jti: String = UUID().uuidString,
        edit: (inout [String: Any], inout [String: Any]) -> Void = { _, _ in }
    ) -> String {
        let raw = key.publicKey.rawRepresentation
        var header: [String: Any] = [
            "typ": "dpop+jwt", "alg": "ES256",
            "jwk": ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(raw.prefix(32)), "y": Base64URL.encode(raw.suffix(32))],
        ]
        var claims: [String: Any] = ["jti": jti, "htm": method, "htu": url, "iat": Int(iat.timeIntervalSince1970)]
        if let token { claims["ath"] = Base64URL.encode(Data(SHA256.hash(data: Data(token.utf8)))) }
        edit(&header, &claims)
        let input = encode(header) + "." + encode(claims)
        let signature = try! (signer ?? key).signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }

    static func encode(_ object: [String: Any]) -> String {
        Base64URL.encode(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    private func refusal(_ proof: String, policy: DPoPPolicy = DPoPPolicy(), target: DPoPVerifier.Target = target) async -> GatehouseError? {
        do {
            _ = try await verifier(policy).verify([proof], target: target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
            return nil
        } catch {
            return error as? GatehouseError
        }
    }

    @Test("a well-formed proof passes and names its key's RFC 7638 thumbprint")
    func wellFormed() async throws {
        let key = P256.Signing.PrivateKey()
        let proof = try await verifier().verify([Self.proof(key: key)], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
        let raw = key.publicKey.rawRepresentation
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(raw.prefix(32)))","y":"\#(Base64URL.encode(raw.suffix(32)))"}"#
        #expect(proof.thumbprint == Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8)))))
    }

    @Test("RFC 7638 §3.1's example key has the RFC's thumbprint")
    func thumbprintVector() throws {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        let jwk = ["kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"]
        #expect(JWKThumbprint.of(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test("an Ed25519 (EdDSA) proof passes")
    func edDSA() async throws {
        let key = Curve25519.Signing.PrivateKey()
        let header = Self.encode([
            "typ": "dpop+jwt", "alg": "EdDSA", "jwk": ["kty": "OKP", "crv": "Ed25519", "x": Base64URL.encode(key.publicKey.rawRepresentation)],
        ])
        let claims = Self.encode([
            "jti": "e1", "htm": "GET", "htu": Self.target.url, "iat": Int(Date().timeIntervalSince1970),
            "ath": Base64URL.encode(Data(SHA256.hash(data: Data(Self.token.utf8)))),
        ])
        let input = header + "." + claims
        let proof = input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)))
        #expect(await refusal(proof) == nil)
    }

    @Test("a second use of a proof is refused, on any verifier sharing the store")
    func replay() async throws {
        let proof = try await verifier().verify([Self.proof(key: .init())], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
        try await verifier().spend(proof, status: 401)
        await #expect(throws: GatehouseError.invalidDPoPProof("The DPoP proof was already used (jti).")) {
            try await verifier().spend(proof, status: 401)
        }
    }

    @Test("every malformed or misdirected proof is refused with invalid_dpop_proof")
    func refusals() async throws {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let cases: [(String, String)] = [
            ("wrong htm", Self.proof(key: key, method: "POST")),
            ("other path", Self.proof(key: key, url: Self.publicURL + "/v1/api/y")),
            ("other host", Self.proof(key: key, url: "http://evil.example:8080/v1/api/x")),
            ("other scheme", Self.proof(key: key, url: "https://gw.example:8080/v1/api/x")),
            ("iat too old", Self.proof(key: key, iat: now.addingTimeInterval(-120))),
            ("iat in the future", Self.proof(key: key, iat: now.addingTimeInterval(60))),
            ("wrong ath", Self.proof(key: key, token: "another-token")),
            ("no ath", Self.proof(key: key, token: nil)),
            ("signed by another key", Self.proof(key: key, signer: .init())),
            ("typ JWT", Self.proof(key: key) { header, _ in header["typ"] = "JWT" }),
            ("alg none", Self.proof(key: key) { header, _ in header["alg"] = "none" }),
            ("alg HS256", Self.proof(key: key) { header, _ in header["alg"] = "HS256" }),
            ("alg ES384 on a P-256 key", Self.proof(key: key) { header, _ in header["alg"] = "ES384" }),
            ("RS256 with an EC key", Self.proof(key: key) { header, _ in header["alg"] = "RS256" }),
            (
                "a private key in jwk",
                Self.proof(key: key) { header, _ in
                    var jwk = header["jwk"] as! [String: Any]
                    jwk["d"] = Base64URL.encode(key.rawRepresentation)
                    header["jwk"] = jwk
                }
            ),
            ("crit names an extension (RFC 7515 §4.1.11)", Self.proof(key: key) { header, _ in header["crit"] = ["exp"] }),
            ("crit empty", Self.proof(key: key) { header, _ in header["crit"] = [String]() }),
            ("no jti", Self.proof(key: key) { _, claims in claims["jti"] = nil }),
            ("no iat", Self.proof(key: key) { _, claims in claims["iat"] = nil }),
            // A NumericDate is a JSON number (RFC 7519 §2), not the same instant as text.
            ("iat as a string", Self.proof(key: key) { _, claims in claims["iat"] = String(Int(now.timeIntervalSince1970)) }),
            ("iat as \"inf\"", Self.proof(key: key) { _, claims in claims["iat"] = "inf" }),
            ("not a JWS", "abc.def"),
            // A valid proof with a part more, a part less, or its signature moved: exactly two dots, in place.
            ("a fourth part", Self.proof(key: key) + ".AAAA"),
            ("a fourth, empty part", Self.proof(key: key) + "."),
            ("no signature part", String(Self.proof(key: key).split(separator: ".").prefix(2).joined(separator: "."))),
            ("an empty header part", "." + Self.proof(key: key).split(separator: ".").dropFirst().joined(separator: ".")),
            ("no dot", Self.proof(key: key).replacingOccurrences(of: ".", with: "")),
        ]
        for (name, proof) in cases {
            let error = await refusal(proof)
            #expect(error?.code == .invalidDPoPProof, "\(name): \(String(describing: error))")
            #expect(error?.status == 401, "\(name)")
        }
        // An unsigned token (alg none, empty signature).
        let unsigned =
            Self.encode(["typ": "dpop+jwt", "alg": "none"]) + "."
            + Self.encode(["jti": "x", "htm": "GET", "htu": Self.target.url, "iat": Int(now.timeIntervalSince1970)]) + "."
        #expect(await refusal(unsigned)?.code == .invalidDPoPProof)
        // Two proofs at once.
        await #expect(throws: GatehouseError.self) {
            _ = try await verifier().verify(
                [Self.proof(key: key), Self.proof(key: key)], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
        }
    }

    @Test("a header seen before skips its decoding, never the checks: another key's signature, a replay, wrong claims are refused")
    func knownHeader() async throws {
        let key = P256.Signing.PrivateKey()
        let v = verifier()
        let first = try await v.verify([Self.proof(key: key)], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
        // The same header bytes again (the key's verifier and the header are now kept), on both paths.
        let second = try #require(
            try v.verifyWithoutWaiting([Self.proof(key: key)], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401))
        #expect(second.thumbprint == first.thumbprint && second.jti != first.jti)
        let forged = Self.proof(key: key, signer: .init())
        let misdirected = Self.proof(key: key, url: Self.publicURL + "/v1/api/y")
        for proof in [forged, misdirected] {
            #expect(throws: GatehouseError.self) {
                try v.verifyWithoutWaiting([proof], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
            }
            await #expect(throws: GatehouseError.self) {
                try await v.verify([proof], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
            }
        }
        // The handed-over spend refuses a replay as the awaited one does.
        try await v.spend(second, status: 401)
        let replayed: Result<Void, any Error> = await withCheckedContinuation { done in v.spend(second, status: 401) { done.resume(returning: $0) } }
        #expect(throws: GatehouseError.invalidDPoPProof("The DPoP proof was already used (jti).")) { try replayed.get() }
    }

    @Test("htu is compared after normalization, without the query")
    func htuNormalization() async throws {
        let key = P256.Signing.PrivateKey()
        for url in ["HTTP://GW.example:8080/v1/api/x", "http://gw.example:8080/v1/%61pi/./x", "http://gw.example:8080/v1/api/y/../x"] {
            #expect(await refusal(Self.proof(key: key, url: url)) == nil, "\(url)")
        }
        let queried = DPoPVerifier.Target(method: "GET", url: Self.publicURL + "/v1/api/x?a=1")
        #expect(await refusal(Self.proof(key: key), target: queried) == nil)
        #expect(DPoPTargetURI.normalized("https://a.example:443/") == "https://a.example/")
        #expect(DPoPTargetURI.normalized("http://a.example") == "http://a.example/")
        #expect(DPoPTargetURI.normalized("ftp://a.example/") == nil)
    }

    @Test("with require_nonce: no nonce or a stale one gets use_dpop_nonce and a fresh nonce; the given one passes")
    func nonces() async throws {
        let policy = DPoPPolicy(requireNonce: true, nonceLifetimeSeconds: 30)
        let key = P256.Signing.PrivateKey()
        let missing = await refusal(Self.proof(key: key), policy: policy)
        #expect(missing?.code == .useDPoPNonce)
        let nonce = try #require(missing?.dpopNonce)
        #expect(await refusal(Self.proof(key: key) { _, claims in claims["nonce"] = nonce }, policy: policy) == nil)
        #expect(await refusal(Self.proof(key: key) { _, claims in claims["nonce"] = "forged" }, policy: policy)?.code == .useDPoPNonce)
        // Another gateway's nonce (other keys) is not this one's.
        let other = DPoPNonces(sealingKeys: [.init(id: "x", bytes: Data(repeating: 1, count: 32))], lifetime: 30).issue(now: Date())
        #expect(await refusal(Self.proof(key: key) { _, claims in claims["nonce"] = other }, policy: policy)?.code == .useDPoPNonce)
        clock.advance(by: 31)
        let stale = await refusal(Self.proof(key: key, iat: Date().addingTimeInterval(31)) { _, claims in claims["nonce"] = nonce }, policy: policy)
        #expect(stale?.code == .useDPoPNonce)
        #expect(stale?.dpopNonce != nil && stale?.dpopNonce != nonce)
    }

    @Test("with replay: instance: nonces are required, a proof is spent once in memory, another instance refuses the nonce")
    func instanceReplay() async throws {
        let policy = DPoPPolicy(replay: .instance)
        let (first, second) = (verifier(policy), verifier(policy))
        let key = P256.Signing.PrivateKey()
        let missing = await refusal(Self.proof(key: key), policy: policy)
        #expect(missing?.code == .useDPoPNonce)
        let nonce = try #require(first.freshNonce())
        let proof = try await first.verify(
            [Self.proof(key: key) { _, claims in claims["nonce"] = nonce }], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
        #expect(first.spendWithoutWaiting(proof, status: 401).map { (try? $0.get()) != nil } == true)
        await #expect(throws: GatehouseError.invalidDPoPProof("The DPoP proof was already used (jti).")) {
            try await first.spend(proof, status: 401)
        }
        let replayed: Result<Void, any Error> = await withCheckedContinuation { done in first.spend(proof, status: 401) { done.resume(returning: $0) }
        }
        #expect((try? replayed.get()) == nil)
        // Another instance (or this one restarted) did not issue the nonce: use_dpop_nonce, with its own.
        do {
            _ = try await second.verify(
                [Self.proof(key: key) { _, claims in claims["nonce"] = nonce }], target: Self.target, ath: DPoPVerifier.ath(of: Self.token),
                status: 401)
            Issue.record("another instance's nonce passed")
        } catch let error as GatehouseError {
            #expect(error.code == .useDPoPNonce)
            #expect(error.dpopNonce != nil && error.dpopNonce != nonce)
        }
        // The store holds no record: `store` mode on the same store accepts the same proof once.
        try await verifier().spend(proof, status: 401)
        // With replay: store, nothing is spent without the store.
        #expect(verifier().spendWithoutWaiting(proof, status: 401) == nil)
    }

    @Test("a bound session needs Authorization: DPoP and its own key (never a cookie or Bearer); an unbound one never takes DPoP")
    func presentation() async throws {
        let key = P256.Signing.PrivateKey()
        let thumbprint = try await verifier().verify([Self.proof(key: key)], target: Self.target, ath: DPoPVerifier.ath(of: Self.token), status: 401)
            .thumbprint
        let now = Date()
        var record = SessionRecord(
            id: "s", tokenHash: "h", provider: "p", subject: "u", identity: Data(), sealedCredential: Data(),
            createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(60), dpopThumbprint: thumbprint)
        let credential = Credential(accessToken: "a", issuedAt: now)
        let bound = ActiveSession(record: record, identity: Identity(subject: "u"), credential: credential)
        record.dpopThumbprint = nil
        let unbound = ActiveSession(record: record, identity: Identity(subject: "u"), credential: credential)
        let v = verifier()

        try await v.authorize(bound, .dpop, [Self.proof(key: key)])
        await #expect(
            throws: GatehouseError.invalidToken("This session is bound to a key: present it as 'Authorization: DPoP <token>' with a DPoP proof.")
        ) {
            try await v.authorize(bound, .bearer, [])
        }
        // A copied token without the key: as the session cookie too (with or without a proof beside it).
        for proofs in [[], [Self.proof(key: key)]] {
            await #expect(
                throws: GatehouseError.invalidToken("This session is bound to a key: present it as 'Authorization: DPoP <token>' with a DPoP proof.")
            ) {
                try await v.authorize(bound, .cookie, proofs)
            }
        }
        try await v.authorize(unbound, .cookie, [])
        await #expect(throws: GatehouseError.self) {
            try await v.authorize(bound, .dpop, [Self.proof(key: .init())])
        }
        await #expect(throws: GatehouseError.self) {
            try await v.authorize(bound, .dpop, [])
        }
        await #expect(throws: GatehouseError.self) {
            try await v.authorize(unbound, .dpop, [Self.proof(key: key)])
        }
        try await v.authorize(unbound, .bearer, [])
    }

    @Test("at a sign-in: optional binds when a proof comes, required refuses none (400), off ignores proofs")
    func signInModes() async throws {
        let key = P256.Signing.PrivateKey()
        let target = DPoPVerifier.Target(method: "POST", url: Self.publicURL + "/v1/session")
        #expect(try await verifier().bindingForSignIn(proofs: [], target: target) == nil)
        #expect(
            try await verifier().bindingForSignIn(proofs: [Self.proof(key: key, method: "POST", url: target.url, token: nil)], target: target) != nil)
        await #expect(
            throws: GatehouseError.invalidDPoPProof("This gateway binds every session to a key: send a DPoP proof with the sign-in.", status: 400)
        ) {
            _ = try await verifier(DPoPPolicy(mode: .required)).bindingForSignIn(proofs: [], target: target)
        }
        #expect(
            try await verifier(DPoPPolicy(mode: .off)).bindingForSignIn(
                proofs: [Self.proof(key: key, method: "POST", url: target.url, token: nil)], target: target) == nil)
        do {
            _ = try await verifier().bindingForSignIn(proofs: [Self.proof(key: key, method: "GET", url: target.url, token: nil)], target: target)
            Issue.record("a proof for GET bound a POST sign-in")
        } catch let error as GatehouseError {
            #expect(error.code == .invalidDPoPProof && error.status == 400)
        }
    }
}

extension DPoPVerifier {
    /// The check and the spend, as a front end carries them out for a decided request.
    fileprivate func authorize(_ session: ActiveSession, _ presentation: SessionResolver.Presentation, _ proofs: [String]) async throws {
        let presented = PresentedCredential(
            token: DPoPVerifierTests.token, presentation: presentation, authorization: nil, proofs: proofs,
            target: presentation == .dpop ? DPoPVerifierTests.target : nil)
        if let proof = try await check(session, presented) { try await spend(proof, status: 401) }
    }
}
