import Foundation
import JWTKit
import Synchronization

/// jwt-kit's key collections for the proofs' keys that ``DPoPHeaderCache`` does not verify itself (every algorithm
/// but ES256, whose key comes parsed with its checked header), by algorithm and thumbprint: a client signs every
/// proof with the same key, and parsing the key is a good part of the cost. Only keys are kept, never a verdict:
/// each proof's signature, claims and `jti` are still checked.
final class DPoPKeyCache: Sendable {
    private let collections = Mutex<[String: JWTKeyCollection]>([:])
    /// Bounded: a client can mint keys at will. Dropping everything when full keeps the cost per entry flat.
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// Checks that `proof` (a compact JWS) is signed by the key of `jwk` for `alg`; throws when it is not, or the
    /// key cannot be read.
    func verify(_ proof: String, alg: String, thumbprint: String, jwk: [String: String]) async throws {
        _ = try await collection(thumbprint: thumbprint, alg: alg, jwk: jwk).verify(proof, as: SignatureOnly.self)
    }

    private func collection(thumbprint: String, alg: String, jwk: [String: String]) async throws -> JWTKeyCollection {
        let key = alg + " " + thumbprint
        if let cached = collections.withLock({ $0[key] }) { return cached }
        var members = jwk
        members["alg"] = alg
        var parsed = try JWK(json: String(decoding: try JSONEncoder().encode(members), as: UTF8.self))
        parsed.keyIdentifier = JWKIdentifier(string: "proof")
        let collection = JWTKeyCollection()
        try await collection.add(jwk: parsed, isDefault: true)
        collections.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = collection
        }
        return collection
    }

    /// jwt-kit checks the signature; the claims are read and checked by ``DPoPVerifier``.
    private struct SignatureOnly: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
