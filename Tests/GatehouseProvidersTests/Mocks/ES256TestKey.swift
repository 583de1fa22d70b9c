import Crypto
import Foundation
import GatehouseCore

/// A P-256 key for JWKS tests: its public JWK, key sets, and ES256 compact JWTs signed with it.
struct ES256TestKey: Sendable {
    let kid: String
    let privateKey = P256.Signing.PrivateKey()

    init(kid: String) {
        self.kid = kid
    }

    /// The public key as a JWK object (JSON text).
    var jwk: String {
        let raw = privateKey.publicKey.rawRepresentation
        let x = Base64URL.encode(raw.prefix(32))
        let y = Base64URL.encode(raw.suffix(32))
        return "{\"kty\":\"EC\",\"crv\":\"P-256\",\"alg\":\"ES256\",\"kid\":\"\(kid)\",\"x\":\"\(x)\",\"y\":\"\(y)\"}"
    }

    /// A JWKS document holding these keys.
    static func jwks(_ keys: [ES256TestKey]) -> String {
        "{\"keys\":[\(keys.map(\.jwk).joined(separator: ","))]}"
    }

    /// A JWKS answer for ``FakeTransport``, optionally with a `Cache-Control` header.
    static func jwksReply(_ keys: [ES256TestKey], cacheControl: String? = nil) -> FakeTransport.Reply {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        return .response(TransportResponse(status: 200, headers: headers, body: Data(jwks(keys).utf8)))
    }

    /// An ES256 JWT over `claims` (JSON text) whose header names this key's `kid`.
    func sign(_ claims: String) throws -> String {
        try sign(claims, kid: kid)
    }

    /// An ES256 JWT over `claims` whose header names `kid` (none when nil), whatever this key's is.
    func sign(_ claims: String, kid: String?) throws -> String {
        let kidMember = kid.map { ",\"kid\":\"\($0)\"" } ?? ""
        let header = Base64URL.encode(Data("{\"alg\":\"ES256\"\(kidMember),\"typ\":\"JWT\"}".utf8))
        let body = Base64URL.encode(Data(claims.utf8))
        let signature = try privateKey.signature(for: Data("\(header).\(body)".utf8)).rawRepresentation
        return "\(header).\(body).\(Base64URL.encode(signature))"
    }
}
