import Crypto
public import Foundation
import GatehouseCore

/// The public key of an ES256 proof (P-256 ECDSA over SHA-256) and the gateway's check of a proof's signature
/// with it: the JOSE `R || S` signature, base64url, over the proof's signing input. Public so that
/// `gatehouse-bench dpop-verify` times this very call.
public struct DPoPES256Key: Sendable {
    private let key: P256.Signing.PublicKey

    /// The key of a JWK's `x` and `y` (32 bytes each), concatenated.
    public init(rawRepresentation: Data) throws {
        key = try P256.Signing.PublicKey(rawRepresentation: rawRepresentation)
    }

    /// The key of a JWK's members, `nil` unless `x` and `y` are 32 bytes each of a point on the curve.
    init?(jwk: [String: String]) {
        guard let x = jwk["x"].flatMap(Base64URL.decode), let y = jwk["y"].flatMap(Base64URL.decode), x.count == 32, y.count == 32,
            let key = try? DPoPES256Key(rawRepresentation: x + y)
        else { return nil }
        self = key
    }

    /// Whether `signature` (the JWS's third part, base64url) signs `signingInput` (its first two parts and the dot).
    /// The signing input is hashed where it lies, in the proof's own bytes when they are contiguous (a native
    /// string's): a copy of it cost more than the hash.
    public func isValidSignature(_ signature: some Collection<UInt8>, signingInput: some Collection<UInt8>) -> Bool {
        // 86 characters are 64 bytes (R || S); any other length is no ES256 signature.
        // As `Data`: swift-crypto copies the raw signature into one, through a generic path for any other type.
        guard signature.count == 86, let raw = Base64URL.decode(signature), let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: raw)
        else { return false }
        var hasher = SHA256()
        if signingInput.withContiguousStorageIfAvailable({ hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }) == nil {
            hasher.update(data: Array(signingInput))
        }
        return key.isValidSignature(ecdsa, for: hasher.finalize())
    }
}
