import Crypto
import Foundation
public import GatehouseCore

/// An ES256 key of the OIDC stand-in, with its public JWK.
public struct StandInOIDCSigningKey: Sendable {
    /// The `kid` in the JWKS and in token headers.
    public let kid: String
    let privateKey: P256.Signing.PrivateKey

    /// A new random key; a random `kid` when none is given.
    public init(kid: String? = nil) {
        self.kid = kid ?? RandomToken.make(byteCount: 6)
        self.privateKey = P256.Signing.PrivateKey()
    }

    /// The public JWK (RFC 7517/7518 §6.2).
    public var jwk: [String: JSONValue] {
        let point = privateKey.publicKey.x963Representation  // 0x04 || x || y
        return [
            "kty": .string("EC"), "crv": .string("P-256"), "use": .string("sig"), "alg": .string("ES256"), "kid": .string(kid),
            "x": .string(Base64URL.encode(point.dropFirst().prefix(32))), "y": .string(Base64URL.encode(point.suffix(32))),
        ]
    }

    /// A compact JWS over `claims` with this key; `header` members replace the defaults (a `null` one removes it).
    public func sign(_ claims: [String: JSONValue], header: [String: JSONValue] = [:]) -> String {
        var fields: [String: JSONValue] = ["alg": .string("ES256"), "typ": .string("JWT"), "kid": .string(kid)]
        fields.merge(header) { _, new in new }
        fields = fields.filter { $0.value != .null }
        let input = Self.encode(fields) + "." + Self.encode(claims)
        let signature = (try? privateKey.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
        return input + "." + Base64URL.encode(signature)
    }

    /// The base64url of a JSON object, keys sorted.
    static func encode(_ object: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Base64URL.encode((try? encoder.encode(JSONValue.object(object))) ?? Data("{}".utf8))
    }
}

extension StandInOIDCSigningKey {
    /// A JWK as compact JSON text, keys sorted (what an attacker would use as an HMAC secret).
    static func jwkJSON(_ jwk: [String: JSONValue]) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(JSONValue.object(jwk))) ?? Data()
    }
}
