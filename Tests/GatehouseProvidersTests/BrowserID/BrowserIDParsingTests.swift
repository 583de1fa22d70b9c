import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct BrowserIDParsingTests {
    static func failure(_ text: String) -> BrowserIDFailure? {
        do {
            _ = try BrowserIDBackedAssertion(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    @Test("a backed assertion parses into its certificate and assertion, new style and legacy bundle")
    func parses() throws {
        for legacy in [false, true] {
            let backed = try BrowserIDBackedAssertion(parsing: BrowserIDFixture.mint(legacy: legacy))
            #expect(backed.certificate.algorithm == "DS128")
            #expect(backed.certificate.payload["iss"] == .string("example.com"))
            #expect(backed.assertion.payload["aud"] == .string(BrowserIDFixture.audience))
            #expect(backed.assertion.signature.count == 40)
        }
    }

    @Test("the §7.7 legacy bundle parses: RS256 certificate from browserid.org, DS256 assertion")
    func legacyVector() throws {
        #expect(BrowserIDVectors.expiredAssertion.count == 3910)
        let backed = try BrowserIDBackedAssertion(parsing: BrowserIDVectors.expiredAssertion)
        #expect(backed.certificate.algorithm == "RS256")
        #expect(backed.certificate.payload["iss"] == .string("browserid.org"))
        #expect(backed.certificate.payload["exp"] == .number(1_323_986_027_240))
        #expect(backed.certificate.payload["iat"] == .number(1_323_899_627_240))
        #expect(backed.certificate.payload["principal"]?["email"] == .string("ryan@rfk.id.au"))
        #expect(backed.assertion.algorithm == "DS256")
        #expect(backed.assertion.payload["exp"] == .number(1_323_899_747_605))
        #expect(backed.assertion.payload["aud"] == .string("http://myfavoritebeer.org"))
        #expect(backed.assertion.signature.count == 64)
    }

    @Test(
        "each malformed part is refused with a clear reason",
        arguments: [
            ("", "malformed_assertion", "empty"),
            ("JUNK", "malformed_assertion", "bundle is not a JSON object"),
            ("J", "malformed_assertion", "neither"),
            ("\u{1}\u{2}", "malformed_assertion", "neither"),
            ("a.b.c~", "malformed_assertion", "no assertion after it"),
            ("~a.b.c", "malformed_assertion", "empty certificate"),
            ("abc~def", "malformed_assertion", "three parts"),
            ("eyJhbGciOiJEUzEyOCJ9.e30~a.b", "malformed_assertion", "three parts"),
            ("eyJhbGciOiJEUzEyOCJ9.e30.~a.b.c", "malformed_assertion", "signature is empty"),
            (".e30.AAAA~a.b.c", "malformed_assertion", "header is empty"),
            ("eyJhbGciOiJEUzEyOCJ9=.e30.AAAA~a.b.c", "malformed_assertion", "header is not unpadded base64url"),
            ("e30.e30.AAAA~a.b.c", "malformed_assertion", "no string 'alg'"),
            ("WyJ4Il0.e30.AAAA~a.b.c", "malformed_assertion", "header is not a JSON object"),
            ("eyJhbGciOiJEUzEyOCJ9.bm90IGpzb24.AAAA~a.b.c", "malformed_assertion", "payload is not a JSON object"),
            ("eyJhbGciOiJEUzEyOCJ9.e30.A+A~a.b.c", "malformed_assertion", "signature is not unpadded base64url"),
            ("eyJhbGciOiJEUzEyOCIsImNyaXQiOlsieCJdfQ.e30.AAAA~a.b.c", "malformed_assertion", "crit"),
            ("e30", "malformed_assertion", "no 'certificates'"),
            ("eyJjZXJ0aWZpY2F0ZXMiOltdLCJhc3NlcnRpb24iOiJhLmIuYyJ9", "malformed_assertion", "no certificate"),
            (
                "eyJhbGciOiJEUzEyOCJ9.e30.AAAA~eyJhbGciOiJEUzEyOCJ9.e30.AAAA~eyJhbGciOiJEUzEyOCJ9.e30.AAAA", "unsupported_certificate_chain",
                "exactly one"
            ),
        ])
    func malformed(_ text: String, _ code: String, _ fragment: String) throws {
        let failure = try #require(Self.failure(text))
        #expect(failure.code == code)
        #expect(failure.reason.contains(fragment), "\(failure.reason)")
    }

    @Test("an assertion over 16 KiB is refused before any parsing")
    func oversize() throws {
        let failure = try #require(Self.failure(String(repeating: "A", count: 16 * 1024 + 1)))
        #expect(failure.code == "assertion_too_large")
        #expect(Self.failure(String(repeating: "A", count: 16 * 1024))?.code == "malformed_assertion")
    }

    @Test("a truncated assertion is malformed, wherever it is cut")
    func truncated() async throws {
        let assertion = BrowserIDFixture.mint()
        let provider = try BrowserIDFixture.provider()
        for length in stride(from: 1, to: assertion.count, by: 97) {
            let code = await BrowserIDFixture.refusal(provider, String(assertion.prefix(length)))
            #expect(["malformed_assertion", "invalid_signature"].contains(code), "cut at \(length): \(code ?? "accepted")")
        }
    }
}
