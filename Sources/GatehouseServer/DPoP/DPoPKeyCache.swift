import JWTKit
import Synchronization

/// Verifiers of the public keys proofs were signed with, by thumbprint and algorithm: a client signs every
/// proof with the same key, and building jwt-kit's verifier (parsing the key) per request is the costly part.
/// Only keys are kept, never a verdict: each proof's signature, claims and `jti` are still checked.
final class DPoPKeyCache: Sendable {
    private let verifiers = Mutex<[String: JWTKeyCollection]>([:])
    /// Bounded: a client can mint keys at will. Dropping everything when full keeps the cost per entry flat.
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// The verifier of `jwk` for `alg`, built once.
    func verifier(thumbprint: String, alg: String, jwk: @autoclosure () throws -> JWK) async throws -> JWTKeyCollection {
        let key = alg + " " + thumbprint
        if let cached = verifiers.withLock({ $0[key] }) { return cached }
        var jwk = try jwk()
        jwk.keyIdentifier = JWKIdentifier(string: "proof")
        let collection = JWTKeyCollection()
        try await collection.add(jwk: jwk, isDefault: true)
        verifiers.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = collection
        }
        return collection
    }
}
