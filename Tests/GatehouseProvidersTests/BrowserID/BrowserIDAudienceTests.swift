import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct BrowserIDAudienceTests {
    static func reason(configured: String, asserted: String) -> String? {
        guard let rp = BrowserIDAudience(configured: configured) else { return "bad configured" }
        switch BrowserIDAudience.asserted(asserted) {
        case .failure(let failure): return failure.reason
        case .success(let audience): return rp.mismatch(audience)
        }
    }

    @Test(
        "audience matching table (scheme, host, port; default ports; short RP forms)",
        arguments: [
            ("http://fakesite.com", "http://fakesite.com:80", nil),
            ("https://fakesite.com", "https://fakesite.com:443", nil),
            ("http://fakesite.com:8000", "http://fakesite.com:8000", nil),
            ("https://fakesite.com:9000", "https://fakesite.com:9000", nil),
            ("fakesite.com:8888", "http://fakesite.com:8888", nil),
            ("fakesite.com", "http://fakesite.com", nil),
            ("HTTPS://FakeSite.com", "https://fakesite.com/", nil),
            ("app://fakesite.com", "app://fakesite.com", nil),
            ("http://fakesite.com", "https://fakesite.com", "scheme mismatch"),
            ("https://fakesite.com", "http://fakesite.com:443", "scheme mismatch"),
            ("fakesite.com", "https://fakesite.com", "scheme mismatch"),
            ("fakesite.com:8888", "http://fakesite.com:8889", "port mismatch"),
            ("http://fakesite.com", "http://fakesite.com:8080", "port mismatch"),
            ("https://fakesite.com", "https://fakesite.com:8443", "port mismatch"),
            ("http://fakesite.com", "http://otherfakesite.com", "domain mismatch"),
            ("http://fakesite.com", "http://sub.fakesite.com", "domain mismatch"),
            ("http://fakesite.com", "http://fakesite.com/path", "audience mismatch: has non-empty path"),
            ("http://fakesite.com", "http://fakesite.com/?q", "audience mismatch: has non-empty path"),
            ("http://fakesite.com", "fakesite.com", "audience mismatch: 'fakesite.com' is not an origin (scheme://host[:port])"),
            ("http://fakesite.com", "ftp://fakesite.com", "audience mismatch: unsupported scheme 'ftp'"),
        ] as [(String, String, String?)])
    func table(_ configured: String, _ asserted: String, _ expected: String?) {
        #expect(Self.reason(configured: configured, asserted: asserted) == expected)
    }

    @Test("configured audiences that are not origins are refused")
    func badConfigured() {
        for text in ["", "http://", "a:b:c", "rp:0", "rp:99999", "http://rp/path", "ftp://rp", "r p"] {
            #expect(BrowserIDAudience(configured: text) == nil, "\(text)")
        }
    }

    @Test("a verified assertion must match a configured audience and the requested one; reasons are stable codes")
    func provider() async throws {
        let configuration = BrowserIDFixture.configuration(audiences: ["https://rp.example.test", "rp.example.test:8080"])
        let provider = try BrowserIDFixture.provider(configuration)
        for good in ["https://rp.example.test", "https://rp.example.test:443", "http://rp.example.test:8080"] {
            #expect(await BrowserIDFixture.refusal(provider, BrowserIDFixture.mint(audience: good)) == nil, "\(good)")
        }
        for (bad, fragment) in [
            ("http://rp.example.test", "scheme mismatch"), ("https://rp.example.test:8443", "port mismatch"),
            ("https://evil.example.test", "domain mismatch"), ("https://rp.example.test/x", "has non-empty path"),
        ] {
            let rejection = await BrowserIDFixture.rejection(provider, BrowserIDFixture.mint(audience: bad))
            #expect(rejection?.code == "audience_mismatch", "\(bad)")
            #expect(rejection?.reason == "audience mismatch: \(fragment)", "\(bad)")
        }
        // The client's own audience must agree with the assertion too.
        let assertion = BrowserIDFixture.mint(audience: "https://rp.example.test")
        #expect(await BrowserIDFixture.refusal(provider, assertion, audience: "https://rp.example.test") == nil)
        #expect(await BrowserIDFixture.refusal(provider, assertion, audience: "rp.example.test:8080") == "audience_mismatch")
    }
}
