import ArgumentParser
import Crypto
import Foundation
import GatehouseCore
import GatehouseServer

/// `gatehouse-bench dpop-verify`: the cost of one ES256 proof signature check, timed on the very call the gateway
/// makes for each DPoP-bound request (``DPoPES256Key/isValidSignature(_:signingInput:)``: base64url signature,
/// P-256 ECDSA over SHA-256 of the signing input, both read in the proof's text as the gateway reads them), on one
/// thread. `bench/run.sh` prints it beside the DPoP rows.
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
        // Proofs as a client sends them, each new: header with the jwk, the claims of a bound call, its own `jti`.
        let raw = privateKey.publicKey.rawRepresentation
        let header =
            #"{"alg":"ES256","jwk":{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(raw.prefix(32)))","y":"\#(Base64URL.encode(raw.suffix(32)))"},"typ":"dpop+jwt"}"#
        let encodedHeader = Base64URL.encode(Data(header.utf8))
        let proofs: [(signature: String, signingInput: String)] = try (0..<Self.distinctProofs).map { _ in
            let claims =
                #"{"ath":"\#(Base64URL.sha256("token"))","htm":"GET","htu":"http://127.0.0.1:8080/v1/api/bench","iat":\#(Int(Date().timeIntervalSince1970)),"jti":"\#(RandomToken.make(byteCount: 12))"}"#
            let signingInput = encodedHeader + "." + Base64URL.encode(Data(claims.utf8))
            return (Base64URL.encode(try privateKey.signature(for: Data(signingInput.utf8)).rawRepresentation), signingInput)
        }
        let same = try timed { _ in proofs[0] }
        let distinct = try timed { proofs[$0 % proofs.count] }
        let measured = String(format: "%.1f us/verification (%d iterations over %d distinct proofs, one thread)", distinct, iterations, proofs.count)
        print("ES256 proof signature check: \(measured); one proof again and again: \(String(format: "%.1f", same)) us")

        /// Microseconds per verification of `proof(i)` for `iterations` values of i, after a tenth as many unmeasured.
        func timed(_ proof: (Int) -> (signature: String, signingInput: String)) throws -> Double {
            var valid = 0
            let warmUp = max(1, iterations / 10)
            for i in 0..<warmUp {
                let (signature, signingInput) = proof(i)
                if key.isValidSignature(signature.utf8, signingInput: signingInput.utf8) { valid += 1 }
            }
            let clock = ContinuousClock()
            let start = clock.now
            for i in 0..<iterations {
                let (signature, signingInput) = proof(i)
                if key.isValidSignature(signature.utf8, signingInput: signingInput.utf8) { valid += 1 }
            }
            let elapsed = clock.now - start
            guard valid == iterations + warmUp else { throw BenchFailure("a signature did not verify") }
            return elapsed.microseconds / Double(iterations)
        }
    }

    /// The gateway never sees a proof twice: timed over this many, the check is not helped by a CPU that has learnt
    /// one input's branches (the modular inversion and the scalar's windows take branches that depend on the
    /// signature, which a loop over one signature lets the branch predictor learn: ~6 % faster here).
    static let distinctProofs = 1000
}
