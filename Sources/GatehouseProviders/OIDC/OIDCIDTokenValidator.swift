import Crypto
import Foundation
import GatehouseCore
import JWTKit

/// Validates an ID token as OpenID Connect Core §3.1.3.7 says; signatures are checked by jwt-kit.
///
/// Every refusal is a ``ProviderError/rejected(code:description:)`` with a stable code:
/// `id_token_malformed`, `id_token_alg_not_allowed`, `invalid_id_token_signature`, `id_token_issuer_mismatch`,
/// `id_token_audience_mismatch`, `id_token_expired`, `id_token_not_yet_valid`, `nonce_mismatch`, `at_hash_mismatch`.
struct OIDCIDTokenValidator: Sendable {
    let configuration: OIDCProvider.Configuration
    let keys: JWKSCache
    let clock: TimeSource

    static let asymmetricAlgorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
    static let hmacAlgorithms: Set<String> = ["HS256", "HS384", "HS512"]

    /// Checks the token and returns its claims.
    /// - Parameters:
    ///   - nonce: the login transaction's nonce; nil on refresh (OIDC Core §12.2).
    ///   - accessToken: checked against `at_hash` when the token carries one.
    func validate(_ token: String, metadata: OIDCProviderMetadata, nonce: String?, accessToken: String?) async throws -> [String: JSONValue] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let header = JSONValue.parse(headerData)?.objectValue,
            let payloadData = Base64URL.decode(parts[1]), let claims = JSONValue.parse(payloadData)?.objectValue
        else {
            throw Self.refusal("id_token_malformed", "The ID token is not a compact JWS with JSON header and payload.")
        }
        guard let alg = header["alg"]?.stringValue else {
            throw Self.refusal("id_token_alg_not_allowed", "The ID token names no algorithm.")
        }
        if header["crit"] != nil {
            throw Self.refusal("id_token_malformed", "The ID token has critical header parameters the gateway does not understand.")
        }
        try await verifySignature(token, alg: alg, kid: header["kid"]?.stringValue, metadata: metadata)
        try checkClaims(claims, metadata: metadata, nonce: nonce)
        if let atHash = claims["at_hash"]?.stringValue, let accessToken {
            guard Self.tokenHash(of: accessToken, alg: alg) == atHash else {
                throw Self.refusal("at_hash_mismatch", "The ID token's at_hash does not match the access token.")
            }
        }
        return claims
    }

    /// Verifies the signature with the provider's JWKS (or, for ID tokens when allowed, the client secret).
    /// - Parameter allowingHMAC: whether HS* with the client secret may be accepted at all (never for logout tokens).
    func verifySignature(_ token: String, alg: String, kid: String?, metadata: OIDCProviderMetadata, allowingHMAC: Bool = true) async throws {
        let collection: JWTKeyCollection
        if Self.hmacAlgorithms.contains(alg) {
            // Only ever with the client secret: a public key used as an HMAC secret is the classic confusion.
            guard allowingHMAC, configuration.allowHMACIDTokens, let secret = configuration.clientSecret else {
                throw Self.refusal("id_token_alg_not_allowed", "\(alg) ID tokens are not accepted from this provider.")
            }
            let digest: DigestAlgorithm = alg == "HS256" ? .sha256 : (alg == "HS384" ? .sha384 : .sha512)
            // RFC 7518 §3.2: the key must be at least as long as the hash (jwt-kit asserts it).
            guard secret.utf8.count >= (alg == "HS256" ? 32 : (alg == "HS384" ? 48 : 64)) else {
                throw Self.refusal("id_token_alg_not_allowed", "The client secret is too short for \(alg) ID tokens.")
            }
            collection = JWTKeyCollection()
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: digest)
        } else {
            guard Self.asymmetricAlgorithms.contains(alg) else {
                throw Self.refusal("id_token_alg_not_allowed", "ID tokens signed with '\(alg)' are not accepted.")
            }
            guard let key = try await keys.key(kid: kid, alg: alg, url: metadata.jwksURI) else {
                throw Self.refusal(
                    "invalid_id_token_signature", "The provider's JWKS has no \(alg) key\(kid.map { " with kid '\($0)'" } ?? "").")
            }
            do {
                collection = try await JWKSCache.verifier(for: key)
            } catch {
                throw Self.refusal("invalid_id_token_signature", "The provider's key for this ID token is not usable.")
            }
        }
        do {
            _ = try await collection.verify(token, as: SignatureOnly.self)
        } catch {
            throw Self.refusal("invalid_id_token_signature", "The ID token's signature does not verify.")
        }
    }

    private func checkClaims(_ claims: [String: JSONValue], metadata: OIDCProviderMetadata, nonce: String?) throws {
        guard claims["iss"]?.stringValue == metadata.issuer else {
            throw Self.refusal("id_token_issuer_mismatch", "The ID token's iss is not the provider's issuer.")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let audience)?: audiences = [audience]
        case .array(let values)?: audiences = values.compactMap(\.stringValue)
        default: audiences = []
        }
        guard audiences.contains(configuration.clientID) else {
            throw Self.refusal("id_token_audience_mismatch", "The ID token is not meant for this client.")
        }
        if let azp = claims["azp"]?.stringValue, azp != configuration.clientID {
            throw Self.refusal("id_token_audience_mismatch", "The ID token's azp is another client.")
        }
        if audiences.count > 1, claims["azp"] == nil {
            throw Self.refusal("id_token_audience_mismatch", "The ID token has several audiences and no azp.")
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else {
            throw Self.refusal("id_token_malformed", "The ID token has no sub.")
        }
        let now = clock.now().timeIntervalSince1970
        // NumericDates are JSON numbers only: `"exp": "inf"` read as text would never expire.
        if let name = NumericDate.malformedClaim(in: claims) {
            throw Self.refusal("id_token_malformed", "The ID token's \(name) is not a JSON number (NumericDate).")
        }
        guard let exp = NumericDate("exp", in: claims).seconds else {
            throw Self.refusal("id_token_malformed", "The ID token has no exp.")
        }
        guard now < exp + configuration.clockSkew else {
            throw Self.refusal("id_token_expired", "The ID token has expired.")
        }
        guard let iat = NumericDate("iat", in: claims).seconds else {
            throw Self.refusal("id_token_malformed", "The ID token has no iat.")
        }
        if iat > now + configuration.clockSkew || NumericDate("nbf", in: claims).seconds.map({ $0 > now + configuration.clockSkew }) == true {
            throw Self.refusal("id_token_not_yet_valid", "The ID token is issued in the future.")
        }
        if let nonce {
            guard claims["nonce"]?.stringValue == nonce else {
                throw Self.refusal("nonce_mismatch", "The ID token's nonce is missing or not this login's.")
            }
        }
    }

    /// `at_hash`/`c_hash`: the left half of the hash that goes with the algorithm, base64url (OIDC Core §3.1.3.6).
    static func tokenHash(of token: String, alg: String) -> String {
        let data = Data(token.utf8)
        let digest: Data
        if alg.hasSuffix("384") {
            digest = Data(SHA384.hash(data: data))
        } else if alg.hasSuffix("512") || alg == "EdDSA" {
            digest = Data(SHA512.hash(data: data))
        } else {
            digest = Data(SHA256.hash(data: data))
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }

    static func refusal(_ code: String, _ description: String) -> ProviderError {
        .rejected(code: code, description: description)
    }

    /// jwt-kit checks the signature; the claims are read and checked above.
    private struct SignatureOnly: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
