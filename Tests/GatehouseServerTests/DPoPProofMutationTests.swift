import Crypto
import Foundation
import GatehouseCore
import GatehouseStore
import Testing

@testable import GatehouseServer

/// The `DPoP` header is attacker-controlled on every request: thousands of mutated proofs, from a fixed seed,
/// through the verifier. None may crash it, and none may pass unless it still is the original proof (the same
/// key and `jti`): a mutation that the verifier accepts must not be able to smuggle in another key or claim.
///
/// Three kinds of mutation: bytes of the compact proof (what a fuzzer does first), bytes of the header or
/// claims JSON re-signed with the key (so the mutation gets past the signature to the claim checks), and
/// JSON values replaced by values of other types and sizes (re-signed as well).
@Suite("DPoP proofs, mutated")
struct DPoPProofMutationTests {
    let clock = TestClock()
    let store = MemorySessionStore()
    let key = P256.Signing.PrivateKey()

    var verifier: DPoPVerifier {
        DPoPVerifier(
            policy: DPoPPolicy(), publicURL: DPoPVerifierTests.publicURL, store: store, clock: clock.source,
            sealingKeys: [.init(id: "k1", bytes: Data(repeating: 7, count: 32))])
    }

    /// Refused with `invalid_dpop_proof`, or passed with the original's key (and, unless re-signed by that key, its
    /// `jti`: only the key's holder can make a new proof); anything else is recorded.
    func judge(_ proof: String, original: DPoPProof, resigned: Bool = false, _ verifier: DPoPVerifier, _ what: String) async {
        do {
            let passed = try await verify(proof, verifier)
            #expect(passed.thumbprint == original.thumbprint, "\(what) passed with another key: \(proof)")
            if !resigned { #expect(passed.jti == original.jti, "\(what) passed as another proof: \(proof)") }
        } catch let error as GatehouseError {
            #expect(error.code == .invalidDPoPProof && error.status == 401, "\(what): \(error) for \(proof)")
        } catch {
            Issue.record("\(what): unexpected \(error) for \(proof)")
        }
    }

    /// A proof through the verifier, for this suite's request and session token.
    func verify(_ proof: String, _ verifier: DPoPVerifier) async throws -> DPoPProof {
        try await verifier.verify([proof], target: DPoPVerifierTests.target, ath: DPoPVerifier.ath(of: DPoPVerifierTests.token), status: 401)
    }

    static func sign(_ header: Data, _ claims: Data, with key: P256.Signing.PrivateKey) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        return input + "." + Base64URL.encode(try! key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator) {
        let interesting: [UInt8] = Array(#".-_=+/"{}[]:,\0 9eE"#.utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
        case 1 where !bytes.isEmpty: bytes.remove(at: Int.random(in: 0..<bytes.count, using: &random))
        case 2: bytes.insert(interesting.randomElement(using: &random)!, at: Int.random(in: 0...bytes.count, using: &random))
        case 3 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &random)] = interesting.randomElement(using: &random)!
        case 4 where bytes.count > 1:
            let cut = Int.random(in: 0..<bytes.count, using: &random)
            bytes = Array(bytes[cut...] + bytes[..<cut])
        default:
            let start = Int.random(in: 0...bytes.count, using: &random)
            let end = min(bytes.count, start + Int.random(in: 0...16, using: &random))
            bytes.insert(contentsOf: bytes[start..<end], at: end)
        }
    }

    @Test("4,000 byte mutations of the compact proof: none crashes, none passes as another proof")
    func compactBytes() async throws {
        var random = SeededGenerator(state: 0xD0_50_0001)
        let verifier = verifier
        let proof = DPoPVerifierTests.proof(key: key)
        let original = try await verify(proof, verifier)
        for round in 0..<4_000 {
            var bytes = Array(proof.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) { Self.mutate(&bytes, &random) }
            await judge(String(decoding: bytes, as: UTF8.self), original: original, verifier, "byte mutation \(round)")
        }
    }

    @Test("3,000 mutations of the header or claims JSON, re-signed: none crashes; a pass is the signing key's")
    func signedJSON() async throws {
        var random = SeededGenerator(state: 0xD0_50_0002)
        let verifier = verifier
        let proof = DPoPVerifierTests.proof(key: key)
        let original = try await verify(proof, verifier)
        let parts = proof.split(separator: ".").map { Array(Base64URL.decode(String($0))!) }
        for round in 0..<3_000 {
            var header = parts[0]
            var claims = parts[1]
            if Bool.random(using: &random) { Self.mutate(&header, &random) } else { Self.mutate(&claims, &random) }
            await judge(Self.sign(Data(header), Data(claims), with: key), original: original, resigned: true, verifier, "JSON mutation \(round)")
        }
    }

    @Test("every header member and claim replaced by values of other types and sizes, re-signed")
    func replacedValues() async throws {
        var random = SeededGenerator(state: 0xD0_50_0003)
        let verifier = verifier
        let original = try await verify(DPoPVerifierTests.proof(key: key), verifier)
        let values: [Any] = [
            NSNull(), true, 0, -1, 1.5e308, Int64.max, "", String(repeating: "A", count: 100_000), "\u{0}", "é",
            [Any](), [String: Any](), ["kty": "EC"], [1, 2, 3], ["crv": "P-256", "kty": "EC", "x": "", "y": ""],
        ]
        let headerKeys = ["typ", "alg", "jwk", "kid", "crit", "x5c", "jku"]
        let claimKeys = ["jti", "htm", "htu", "iat", "ath", "nonce", "exp"]
        for round in 0..<600 {
            let value = values.randomElement(using: &random)!
            let inHeader = Bool.random(using: &random)
            let member = (inHeader ? headerKeys : claimKeys).randomElement(using: &random)!
            let proof = DPoPVerifierTests.proof(key: key, jti: original.jti) { header, claims in
                if inHeader { header[member] = value } else { claims[member] = value }
            }
            await judge(proof, original: original, resigned: true, verifier, "\(member) = \(String(describing: value).prefix(40)) (\(round))")
        }
    }
}
