import ArgumentParser
import Crypto
import Foundation
import GatehouseCore
import GatehouseServer

/// `gatehouse-bench dpop-verify`: the cost of one ES256 proof signature check, timed on the very call the gateway
/// makes for each DPoP-bound request (``DPoPES256Key/isValidSignature(_:for:)``: base64url signature, P-256 ECDSA
/// over SHA-256 of the signing input), on one thread. `bench/run.sh` prints it beside the DPoP rows.
///
/// ```sh
/// gatehouse-bench dpop-verify --iterations 20000
/// ```
struct DPoPVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dpop-verify", abstract: "Time the gateway's ES256 DPoP proof signature check; print microseconds per verification.")

    @Option(help: "How many verifications are timed (after as many tenths unmeasured).")
    var iterations = 20_000

    func validate() throws {
        guard iterations > 0 else { throw ValidationError("--iterations must be positive") }
    }

    func run() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try DPoPES256Key(rawRepresentation: privateKey.publicKey.rawRepresentation)
        // A proof as a client sends it: header with the jwk, the claims of a bound call.
        let raw = privateKey.publicKey.rawRepresentation
        let header =
            #"{"alg":"ES256","jwk":{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(raw.prefix(32)))","y":"\#(Base64URL.encode(raw.suffix(32)))"},"typ":"dpop+jwt"}"#
        let claims =
            #"{"ath":"\#(Base64URL.sha256("token"))","htm":"GET","htu":"http://127.0.0.1:8080/v1/api/bench","iat":\#(Int(Date().timeIntervalSince1970)),"jti":"\#(RandomToken.make(byteCount: 12))"}"#
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        let signingInput = Data(input.utf8)
        let signature = Base64URL.encode(try privateKey.signature(for: signingInput).rawRepresentation)
        var valid = 0
        for _ in 0..<max(1, iterations / 10) where key.isValidSignature(signature.utf8, for: signingInput) { valid += 1 }
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations where key.isValidSignature(signature.utf8, for: signingInput) { valid += 1 }
        let elapsed = clock.now - start
        guard valid == iterations + max(1, iterations / 10) else { throw BenchFailure("a signature did not verify") }
        print(
            String(
                format: "ES256 proof signature check: %.1f us/verification (%d iterations, one thread)", elapsed.microseconds / Double(iterations),
                iterations))
    }
}
