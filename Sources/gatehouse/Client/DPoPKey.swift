import Crypto
import Foundation
import GatehouseCore
import JWTKit

/// The client's DPoP key (ES256, P-256): made at sign-in, kept in the credentials file as PKCS#8 PEM, and
/// used for a fresh proof on every request of the session (RFC 9449).
struct DPoPKey: Sendable {
    let privateKey: P256.Signing.PrivateKey

    /// A new random key.
    init() {
        privateKey = P256.Signing.PrivateKey()
    }

    /// The key stored as PEM.
    init(pem: String) throws {
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ClientFailure("the stored DPoP key cannot be read (\(error)); sign in again")
        }
    }

    /// The private key as PKCS#8 PEM, for the credentials file.
    var pemRepresentation: String { privateKey.pemRepresentation }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`), without any private part.
    var publicJWK: [String: String] {
        let point = Array(privateKey.publicKey.x963Representation)  // 0x04 || X (32 bytes) || Y (32 bytes)
        return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(Data(point[1..<33])), "y": Base64URL.encode(Data(point[33..<65]))]
    }

    /// A DPoP proof for one request.
    /// - Parameters:
    ///   - method: the request's method.
    ///   - url: the request's URL; query and fragment are left out of `htu`.
    ///   - accessToken: the session token the request carries (for `ath`); nil for the code exchange.
    ///   - nonce: the server's last `DPoP-Nonce`.
    func proof(method: String, url: String, accessToken: String?, nonce: String?) async throws -> String {
        let claims = DPoPProofClaims(
            jti: RandomToken.make(byteCount: 16),
            htm: method,
            htu: Self.targetURI(url),
            iat: Int(Date().timeIntervalSince1970),
            ath: accessToken.map(Base64URL.sha256),
            nonce: nonce)
        var header = JWTHeader()
        header.typ = "dpop+jwt"
        header.alg = "ES256"
        header.jwk = publicJWK.mapValues { JWTHeaderField.string($0) }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey))
        return try await keys.sign(claims, header: header)
    }

    /// The `htu` of a request URL: without its query and fragment.
    static func targetURI(_ url: String) -> String {
        String(url.prefix { $0 != "?" && $0 != "#" })
    }
}
