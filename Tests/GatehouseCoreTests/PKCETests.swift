import Foundation
import GatehouseCore
import Testing

@Suite struct PKCETests {
    /// RFC 7636 Appendix B.
    static let octets: [UInt8] = [
        116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
        22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
    ]
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    @Test("the RFC 7636 Appendix B octets encode to the Appendix B verifier")
    func appendixBOctetsEncodeToVerifier() {
        #expect(Base64URL.encode(Data(Self.octets)) == Self.verifier)
    }

    @Test("the S256 challenge of the RFC 7636 Appendix B verifier matches the RFC")
    func appendixBChallenge() {
        #expect(PKCE.challenge(for: Self.verifier) == Self.challenge)
    }

    @Test("verify accepts the matching verifier")
    func verifyAcceptsMatchingVerifier() {
        #expect(PKCE.verify(Self.verifier, against: Self.challenge))
    }

    @Test("verify refuses a different verifier")
    func verifyRefusesDifferentVerifier() {
        #expect(!PKCE.verify(PKCE.makeVerifier(), against: Self.challenge))
    }

    @Test("verify refuses a challenge that differs in one character")
    func verifyRefusesTamperedChallenge() {
        let tampered = String(Self.challenge.dropLast()) + "N"
        #expect(!PKCE.verify(Self.verifier, against: tampered))
    }

    @Test("verify refuses the plain method: the verifier itself is not a valid S256 challenge of itself")
    func verifyRefusesPlain() {
        #expect(!PKCE.verify(Self.verifier, against: Self.verifier))
    }

    @Test(
        "verify refuses a malformed verifier even when its challenge matches",
        arguments: [
            String(repeating: "a", count: 42),
            String(repeating: "a", count: 129),
            String(repeating: "a", count: 42) + "+",
            "short",
        ])
    func verifyRefusesMalformedVerifierWithMatchingChallenge(verifier: String) {
        #expect(!PKCE.verify(verifier, against: PKCE.challenge(for: verifier)))
    }

    @Test("verifiers of 43 and 128 unreserved characters are well formed")
    func lengthBoundsAccepted() {
        #expect(PKCE.isValidVerifier(String(repeating: "a", count: 43)))
        #expect(PKCE.isValidVerifier(String(repeating: "Z", count: 128)))
        #expect(PKCE.isValidVerifier(Self.verifier))
        #expect(PKCE.isValidVerifier("-._~" + String(repeating: "0", count: 39)))
    }

    @Test("verifiers shorter than 43 or longer than 128 characters are refused")
    func lengthBoundsRefused() {
        #expect(!PKCE.isValidVerifier(""))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 129)))
    }

    @Test(
        "verifiers with characters outside [A-Za-z0-9-._~] are refused",
        arguments: ["+", "/", "=", " ", "é", "%", "\u{0660}", "ａ"])
    func badCharactersRefused(character: String) {
        let verifier = String(repeating: "a", count: 42) + character
        #expect(!PKCE.isValidVerifier(verifier))
    }

    @Test("isValidChallenge accepts a 43-character base64url SHA-256")
    func validChallenge() {
        #expect(PKCE.isValidChallenge(Self.challenge))
        #expect(PKCE.isValidChallenge(PKCE.challenge(for: PKCE.makeVerifier())))
    }

    @Test(
        "isValidChallenge refuses wrong lengths, padding and non-base64url characters",
        arguments: [
            "",
            String("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".dropLast()),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cMA",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw cM",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw*cM",
        ])
    func invalidChallenge(challenge: String) {
        #expect(!PKCE.isValidChallenge(challenge))
    }

    @Test(
        "isValidChallenge refuses the standard-base64 characters + and /, which are not base64url")
    func challengeWithStandardBase64CharactersRefused() {
        #expect(!PKCE.isValidChallenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"))
        #expect(!PKCE.isValidChallenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw/cM"))
    }

    @Test("makeVerifier returns a well-formed 43-character verifier")
    func madeVerifierIsValid() {
        let verifier = PKCE.makeVerifier()
        #expect(verifier.count == 43)
        #expect(PKCE.isValidVerifier(verifier))
        #expect(PKCE.verify(verifier, against: PKCE.challenge(for: verifier)))
    }

    @Test("makeVerifier returns a different value every time")
    func madeVerifiersAreRandom() {
        let verifiers = Set((0..<200).map { _ in PKCE.makeVerifier() })
        #expect(verifiers.count == 200)
    }
}
