import Crypto
import Foundation
import GatehouseCore
import JWTKit
import Synchronization

/// Verifiers of the public keys proofs were signed with, by algorithm and thumbprint: a client signs every
/// proof with the same key, and parsing the key is a good part of the cost. Only keys are kept, never a
/// verdict: each proof's signature, claims and `jti` are still checked.
///
/// The awaited path (``DPoPVerifier/verify(_:target:accessToken:status:)``): ES256 with swift-crypto directly (P-256
/// ECDSA over SHA-256, the JOSE `R || S` signature), the other algorithms by jwt-kit. On the event loop, an ES256
/// proof's key comes with its checked header instead (``DPoPHeaderCache``).
final class DPoPKeyCache: Sendable {
    enum Verifier: Sendable {
        case p256(DPoPES256Key)
        case jwtKit(JWTKeyCollection)
    }

    private let verifiers = Mutex<[String: Verifier]>([:])
    /// Bounded: a client can mint keys at will. Dropping everything when full keeps the cost per entry flat.
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// Whether `signature` (base64url) signs `signingInput` under the key of `jwk` for `alg`.
    func verify(
        signingInput: Data, signature: some Collection<UInt8>, alg: String, thumbprint: String, jwk: [String: String],
        proof: String
    ) async throws -> Bool {
        switch try await verifier(thumbprint: thumbprint, alg: alg, jwk: jwk) {
        case .p256(let key):
            return key.isValidSignature(signature, for: signingInput)
        case .jwtKit(let collection):
            _ = try await collection.verify(proof, as: SignatureOnly.self)
            return true
        }
    }

    private func verifier(thumbprint: String, alg: String, jwk: [String: String]) async throws -> Verifier {
        let key = alg + " " + thumbprint
        if let cached = verifiers.withLock({ $0[key] }) { return cached }
        let verifier: Verifier
        if alg == "ES256", let key = DPoPES256Key(jwk: jwk) {
            verifier = .p256(key)
        } else {
            var members = jwk
            members["alg"] = alg
            var parsed = try JWK(json: String(decoding: try JSONEncoder().encode(members), as: UTF8.self))
            parsed.keyIdentifier = JWKIdentifier(string: "proof")
            let collection = JWTKeyCollection()
            try await collection.add(jwk: parsed, isDefault: true)
            verifier = .jwtKit(collection)
        }
        verifiers.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = verifier
        }
        return verifier
    }

    /// jwt-kit checks the signature; the claims are read and checked by ``DPoPVerifier``.
    private struct SignatureOnly: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
