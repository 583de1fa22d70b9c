import ArgumentParser
import Crypto
import Foundation
import GatehouseCore

/// `gatehouse-bench dpop-proofs`: DPoP proofs (RFC 9449) for a load test, one per line, each with its own
/// `jti`, all signed by one ES256 key kept in `--key` (made there on first use). `bench/run.sh` binds a
/// session with one proof and then feeds wrk a file of proofs for `/v1/api` (wrk cannot sign).
///
/// ```sh
/// gatehouse-bench dpop-proofs --key k.p256 --method POST --url http://127.0.0.1:8080/v1/auth/bench/token
/// gatehouse-bench dpop-proofs --key k.p256 --url http://127.0.0.1:8080/v1/api/bench --token T --nonce N --count 100000
/// ```
struct DPoPProofsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dpop-proofs", abstract: "Print DPoP proofs for one request, one per line, signed by one ES256 key.")

    @Option(help: "File with the raw P-256 private key (32 bytes, base64); created when missing.")
    var key: String

    @Option(help: "The proofs' htm.")
    var method = "GET"

    @Option(help: "The proofs' htu: the request URL as the gateway's public_url names it.")
    var url: String

    @Option(help: "The session token the proofs accompany (sets ath); none for a sign-in.")
    var token: String?

    @Option(help: "The server nonce the proofs carry (the DPoP-Nonce the gateway answered); none when not given.")
    var nonce: String?

    @Option(help: "How many proofs.")
    var count = 1

    func run() throws {
        let privateKey = try loadOrCreateKey()
        let raw = privateKey.publicKey.rawRepresentation
        let header = try Self.base64JSON([
            "typ": "dpop+jwt", "alg": "ES256",
            "jwk": ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(raw.prefix(32)), "y": Base64URL.encode(raw.suffix(32))],
        ])
        let ath = token.map(Base64URL.sha256)
        let iat = Int(Date().timeIntervalSince1970)
        var out = ""
        out.reserveCapacity(count * 400)
        for _ in 0..<count {
            var claims: [String: Any] = ["jti": RandomToken.make(byteCount: 12), "htm": method, "htu": url, "iat": iat]
            if let ath { claims["ath"] = ath }
            if let nonce { claims["nonce"] = nonce }
            let input = header + "." + (try Self.base64JSON(claims))
            let signature = try privateKey.signature(for: Data(input.utf8)).rawRepresentation
            out += input + "." + Base64URL.encode(signature) + "\n"
            if out.utf8.count > 1 << 20 {
                FileHandle.standardOutput.write(Data(out.utf8))
                out.removeAll(keepingCapacity: true)
            }
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    private func loadOrCreateKey() throws -> P256.Signing.PrivateKey {
        if let text = try? String(contentsOfFile: key, encoding: .utf8),
            let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return try P256.Signing.PrivateKey(rawRepresentation: bytes)
        }
        let created = P256.Signing.PrivateKey()
        guard
            FileManager.default.createFile(
                atPath: key, contents: Data(created.rawRepresentation.base64EncodedString().utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw ValidationError("cannot write \(key)")
        }
        return created
    }

    private static func base64JSON(_ object: [String: Any]) throws -> String {
        Base64URL.encode(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}
