import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct BrowserIDVerificationTests {
    typealias F = BrowserIDFixture

    @Test("a valid assertion gives subject = email, an opaque non-refreshable credential and the configured lifetime")
    func success() async throws {
        for legacy in [false, true] {
            let result = try await F.provider().verifyAssertion(F.mint(legacy: legacy), audience: F.audience)
            #expect(result.identity.subject == "alice@example.com")
            #expect(result.identity.email == "alice@example.com")
            #expect(result.identity.claims["issuer"] == "example.com")
            #expect(result.credential.refreshToken == nil)
            #expect(result.credential.expiresAt == nil)
            #expect(result.credential.accessToken.count == 43)
            #expect(!F.mint().contains(result.credential.accessToken))
            #expect(result.sessionLifetime == 3600)
        }
    }

    @Test("RSA-signed certificates and assertions verify too")
    func rsaChain() async throws {
        let idp = try BrowserIDSigningKey.rsa(bits: 2048)
        let user = try BrowserIDSigningKey.rsa(bits: 1024)
        let provider = try F.provider(F.configuration(pinned: ["example.com": F.supportDocument(idp)]))
        #expect(await F.refusal(provider, F.mint(issuerKey: idp, userKey: user)) == nil)
        #expect(await F.refusal(provider, F.mint(issuerKey: idp, userKey: F.userKey)) == nil)
        #expect(await F.refusal(provider, F.mint(issuerKey: F.issuerKey, userKey: user)) == "unsupported_algorithm")
    }

    @Test("expiry: assertion exp, certificate exp, iat in the future, each with the configured skew")
    func expiry() async throws {
        let provider = try F.provider(F.configuration(skew: 30))
        let now = F.nowMilliseconds
        #expect(await F.refusal(provider, F.mint(assertionExpires: now - 31_000)) == "assertion_expired")
        #expect(await F.refusal(provider, F.mint(assertionExpires: now - 29_000)) == nil)
        #expect(await F.refusal(provider, F.mint(certificateExpires: now - 31_000)) == "certificate_expired")
        #expect(await F.refusal(provider, F.mint(certificateExpires: now - 29_000)) == nil)
        #expect(await F.refusal(provider, F.mint(certificateExtras: ["iat": .number(now + 31_000)])) == "not_yet_valid")
        #expect(await F.refusal(provider, F.mint(certificateExtras: ["iat": .number(now + 29_000)])) == nil)
        #expect(await F.refusal(provider, F.mint(certificateExtras: ["exp": .string("soon")])) == "malformed_assertion")
        let strict = try F.provider(F.configuration(skew: 0))
        #expect(await F.refusal(strict, F.mint(assertionExpires: now - 1)) == "assertion_expired")
    }

    @Test("§7.7: PyBrowserID's EXPIRED_ASSERTION is refused as expired (before any key is needed)")
    func expiredVector() async throws {
        let provider = try F.provider(F.configuration(audiences: ["http://myfavoritebeer.org"], pinned: [:], fetch: true))
        let rejection = await F.rejection(provider, BrowserIDVectors.expiredAssertion)
        #expect(rejection?.code == "assertion_expired")
        #expect(rejection?.reason.contains("2011-12-14") == true)
        // At its own time it is past expiry checks, and fails on trust: browserid.org is not pinned or fetched here.
        let then = Date(timeIntervalSince1970: 1_323_899_700)
        let offline = try F.provider(F.configuration(audiences: ["http://myfavoritebeer.org"], pinned: [:]), now: then)
        #expect(await F.refusal(offline, BrowserIDVectors.expiredAssertion) == "untrusted_issuer")
    }

    @Test("tampered certificate or assertion signatures are refused")
    func tampered() async throws {
        let provider = try F.provider()
        let assertion = F.mint()
        let parts = assertion.split(separator: "~").map(String.init)
        #expect(await F.refusal(provider, BrowserIDCryptoTests.flipLastSignatureByte(parts[0]) + "~" + parts[1]) == "invalid_signature")
        #expect(await F.refusal(provider, parts[0] + "~" + BrowserIDCryptoTests.flipLastSignatureByte(parts[1])) == "invalid_signature")
        // A certificate signed by another key than the pinned one.
        #expect(await F.refusal(provider, F.mint(issuerKey: F.otherKey)) == "invalid_signature")
        // The assertion signed by another key than the certified one.
        let other = F.mint(userKey: F.otherKey).split(separator: "~")[1]
        #expect(await F.refusal(provider, parts[0] + "~" + other) == "invalid_signature")
    }

    @Test("issuer authority: only the email domain's IdP, or a trusted secondary for domains without one")
    func authority() async throws {
        let pinned = [
            "example.com": F.supportDocument(F.issuerKey), "evil.example": F.supportDocument(F.otherKey),
            "login.persona.org": F.supportDocument(.dsa128(seed: "login.persona.org")),
        ]
        let provider = try F.provider(F.configuration(pinned: pinned, secondaries: ["login.persona.org"]))
        // evil.example is pinned (its key is known), but it is not example.com's IdP.
        let rejection = await F.rejection(provider, F.mint(issuer: "evil.example", issuerKey: F.otherKey))
        #expect(rejection?.code == "untrusted_issuer")
        #expect(rejection?.reason == "untrusted issuer, expected 'example.com', got 'evil.example'")
        // evil.example certifies its own users.
        #expect(await F.refusal(provider, F.mint(email: "mallory@evil.example", issuer: "evil.example", issuerKey: F.otherKey)) == nil)
        // The secondary may not certify example.com (it has its own IdP) …
        let persona = BrowserIDSigningKey.dsa128(seed: "login.persona.org")
        #expect(await F.refusal(provider, F.mint(issuer: "login.persona.org", issuerKey: persona)) == "untrusted_issuer")
        // … but may certify a domain without one.
        #expect(await F.refusal(provider, F.mint(email: "bob@gmail.test", issuer: "login.persona.org", issuerKey: persona)) == nil)
        // Not a secondary and not the domain's IdP.
        let unknown = await F.rejection(provider, F.mint(email: "bob@gmail.test", issuer: "evil.example", issuerKey: F.otherKey))
        #expect(unknown?.code == "untrusted_issuer")
        #expect(unknown?.reason.contains("not a trusted secondary") == true)
    }

    @Test("support documents are fetched over https through the transport, cached, and delegation is followed")
    func fetchAndDelegation() async throws {
        let transport = FakeTransport([
            .json(#"{"authority":"idp.example.net"}"#),
            .json(F.supportDocument(F.issuerKey)),
        ])
        let provider = try F.provider(F.configuration(pinned: [:], fetch: true), transport: transport)
        #expect(await F.refusal(provider, F.mint(issuer: "idp.example.net")) == nil)
        #expect(
            transport.requests.map(\.url) == [
                "https://example.com/.well-known/browserid", "https://idp.example.net/.well-known/browserid",
            ])
        // Cached: no further fetches.
        #expect(await F.refusal(provider, F.mint(issuer: "idp.example.net")) == nil)
        #expect(transport.requests.count == 2)
        // The delegating domain itself is not the authority.
        #expect(await F.refusal(provider, F.mint(issuer: "example.com")) == "untrusted_issuer")
    }

    @Test("delegation deeper than 5 and delegation cycles are refused")
    func delegationLimits() async throws {
        // example.com -> d1 -> … -> d5 holds keys: 5 delegations, accepted.
        var replies = (1...5).map { FakeTransport.Reply.json("{\"authority\":\"d\($0).example\"}") }
        replies.append(.json(F.supportDocument(F.issuerKey)))
        let deep = try F.provider(F.configuration(pinned: [:], fetch: true), transport: FakeTransport(replies))
        #expect(await F.refusal(deep, F.mint(issuer: "d5.example")) == nil)

        // Six delegations: refused.
        var tooDeep = (1...6).map { FakeTransport.Reply.json("{\"authority\":\"d\($0).example\"}") }
        tooDeep.append(.json(F.supportDocument(F.issuerKey)))
        let transport = FakeTransport(tooDeep)
        let rejection = await F.rejection(
            try F.provider(F.configuration(pinned: [:], fetch: true), transport: transport), F.mint(issuer: "d6.example"))
        #expect(rejection?.code == "untrusted_issuer")
        #expect(rejection?.reason.contains("deeper than 5") == true)
        #expect(transport.requests.count == 6)

        // A cycle: example.com -> a.example -> example.com.
        let cycle = FakeTransport([.json(#"{"authority":"a.example"}"#), .json(#"{"authority":"example.com"}"#)])
        let looped = await F.rejection(try F.provider(F.configuration(pinned: [:], fetch: true), transport: cycle), F.mint(issuer: "a.example"))
        #expect(looped?.code == "untrusted_issuer")
        #expect(looped?.reason.contains("loops (example.com -> a.example -> example.com)") == true)
        // Self-delegation (PyBrowserID's infinite.org).
        let selfLoop = FakeTransport([.json(#"{"authority":"example.com"}"#)])
        #expect(await F.refusal(try F.provider(F.configuration(pinned: [:], fetch: true), transport: selfLoop), F.mint()) == "untrusted_issuer")
    }

    @Test("disabled domains, 404s and unreachable IdPs")
    func lookupFailures() async throws {
        let disabled = FakeTransport([.json(#"{"disabled":true}"#)])
        #expect(await F.refusal(try F.provider(F.configuration(pinned: [:], fetch: true), transport: disabled), F.mint()) == "untrusted_issuer")
        let missing = FakeTransport([.text("not found", status: 404)])
        #expect(await F.refusal(try F.provider(F.configuration(pinned: [:], fetch: true), transport: missing), F.mint()) == "untrusted_issuer")
        let down = FakeTransport([.failure(TransportError("connection refused"))])
        await #expect(throws: ProviderError.unavailable("the support document of 'example.com' could not be fetched (connection refused)")) {
            try await F.provider(F.configuration(pinned: [:], fetch: true), transport: down).verifyAssertion(F.mint(), audience: "")
        }
        let failing = FakeTransport([.text("oops", status: 503)])
        await #expect(throws: ProviderError.self) {
            try await F.provider(F.configuration(pinned: [:], fetch: true), transport: failing).verifyAssertion(F.mint(), audience: "")
        }
        // With fetching off and nothing pinned, nothing is fetched and the issuer is untrusted.
        let offline = FakeTransport()
        #expect(await F.refusal(try F.provider(F.configuration(pinned: [:], fetch: false), transport: offline), F.mint()) == "untrusted_issuer")
        #expect(offline.requests.isEmpty)
    }

    @Test("remote verifier: form POST of assertion and audience; the returned audience is checked again")
    func remote() async throws {
        let url = "https://verifier.example.test/verify"
        func provider(_ replies: [FakeTransport.Reply]) throws -> (BrowserIDProvider, FakeTransport) {
            let transport = FakeTransport(replies)
            var configuration = F.configuration()
            configuration.verifier = .remote(url: url)
            return (try F.provider(configuration, transport: transport), transport)
        }
        let okay =
            #"{"status":"okay","email":"alice@example.com","audience":"https://rp.example.test","expires":1700000060000,"issuer":"example.com"}"#
        let (good, transport) = try provider([.json(okay)])
        let result = try await good.verifyAssertion(F.mint(), audience: "")
        #expect(result.identity.subject == "alice@example.com")
        #expect(transport.requests.first?.url == url)
        #expect(transport.requests.first?.form["audience"] == "https://rp.example.test")
        #expect(transport.requests.first?.form["assertion"] == nil || transport.requests.first?.form["assertion"]?.contains("~") == true)

        let wrongAudience = okay.replacingOccurrences(of: "https://rp.example.test", with: "https://evil.example")
        #expect(await F.refusal(try provider([.json(wrongAudience)]).0, F.mint()) == "audience_mismatch")
        let failure = #"{"status":"failure","reason":"assertion has expired"}"#
        #expect(await F.refusal(try provider([.json(failure)]).0, F.mint()) == "assertion_expired")
        await #expect(throws: ProviderError.self) { try await provider([.text("down", status: 502)]).0.verifyAssertion(F.mint(), audience: "") }
        // Garbage never leaves the gateway.
        let (local, unused) = try provider([])
        #expect(await F.refusal(local, "garbage") == "malformed_assertion")
        #expect(unused.requests.isEmpty)
    }
}
