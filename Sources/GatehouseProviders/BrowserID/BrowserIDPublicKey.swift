import BigInt
import Foundation
import GatehouseCore

/// A public key as BrowserID writes it: `{"algorithm":"RS","n":"<decimal>","e":"<decimal>"}` or
/// `{"algorithm":"DS","p","q","g","y"}` (hex); JWK-style keys (`kty` `RSA`/`DSA`, base64url integers)
/// as browserid-crypto also reads them.
///
/// The key decides the algorithm family; the JWS header's `alg` must belong to that family and its size
/// label is checked against the key (DSA) or ignored (RSA, whose labels differ between implementations).
enum BrowserIDPublicKey: Sendable, Equatable {
    case rsa(BrowserIDRSAKey)
    case dsa(BrowserIDDSAKey)

    /// - Parameter role: where the key came from, for messages.
    init(json: JSONValue, role: String) throws(BrowserIDFailure) {
        guard let members = json.objectValue else { throw .malformed("\(role) is not a JSON object") }
        func integer(_ name: String, radix: Int) throws(BrowserIDFailure) -> BigUInt {
            guard let text = members[name]?.stringValueIfString, !text.isEmpty, text.count <= 2048 else {
                throw .malformed("\(role) has no '\(name)'")
            }
            if radix == 64 {
                guard let data = Base64URL.decode(text), !data.isEmpty else { throw .malformed("\(role)'s '\(name)' is not base64url") }
                return BigUInt(data)
            }
            guard text.allSatisfy(\.isHexDigit), let value = BigUInt(text, radix: radix) else {
                throw .malformed("\(role)'s '\(name)' is not a \(radix == 10 ? "decimal" : "hexadecimal") integer")
            }
            return value
        }
        let family: String
        let radix: Int
        if let kty = members["kty"]?.stringValueIfString {
            family = kty == "RSA" ? "RS" : (kty == "DSA" ? "DS" : kty)
            radix = 64
        } else {
            family = members["algorithm"]?.stringValueIfString ?? ""
            radix = family == "RS" ? 10 : 16
        }
        switch family {
        case "RS":
            self = .rsa(try BrowserIDRSAKey(n: integer("n", radix: radix), e: integer("e", radix: radix), role: role))
        case "DS":
            self = .dsa(
                try BrowserIDDSAKey(
                    p: integer("p", radix: radix), q: integer("q", radix: radix), g: integer("g", radix: radix),
                    y: integer("y", radix: radix), role: role))
        case "":
            throw .malformed("\(role) names no 'algorithm'")
        default:
            throw .unsupportedAlgorithm("\(role) is a '\(family)' key; only RS and DS keys are supported")
        }
    }

    /// Checks the JWS signature with this key; throws `invalid_signature` or `unsupported_algorithm`.
    func verify(_ jws: BrowserIDJWS, role: String) throws(BrowserIDFailure) {
        let valid: Bool
        switch self {
        case .rsa(let key):
            guard jws.algorithm.hasPrefix("RS"), ["RS64", "RS128", "RS256"].contains(jws.algorithm) else {
                throw .unsupportedAlgorithm("the \(role) is signed with '\(jws.algorithm)' but its key is an RSA key")
            }
            valid = try key.isValidSignature(jws.signature, for: jws.signingInput)
        case .dsa(let key):
            guard jws.algorithm == key.algorithm else {
                throw .unsupportedAlgorithm("the \(role) is signed with '\(jws.algorithm)' but its key is a \(key.algorithm) key")
            }
            valid = key.isValidSignature(jws.signature, for: jws.signingInput)
        }
        guard valid else { throw .invalidSignature("the \(role)'s signature does not verify") }
    }
}
