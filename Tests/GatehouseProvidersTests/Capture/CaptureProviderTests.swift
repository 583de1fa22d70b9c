import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct CaptureProviderTests {
    static let descriptor = ProviderDescriptor(id: "legacy", kind: "capture")

    static func make(
        from: String = "cookie", probe: String = "https://legacy.example.test/api/me", extra: [(String, ConfigNode)] = [],
        transport: FakeTransport = FakeTransport()
    ) throws -> CaptureProvider {
        var entries: [(String, Int, ConfigNode)] = [
            ("login_url", 2, Nodes.scalar("http://legacy.example.test/login", line: 2)),
            ("allowed_origins", 3, Nodes.sequence(["http://legacy.example.test"], line: 3)),
            ("success_url", 6, Nodes.scalar("http://legacy.example.test/welcome*", line: 6)),
            ("capture", 7, Nodes.scalars([("from", from)], firstLine: 8)),
            ("probe", 10, Nodes.scalars([("url", probe)], firstLine: 11)),
        ]
        entries += extra.enumerated().map { ($1.0, 20 + $0, $1.1) }
        let context = ProviderContext(
            transport: transport, clock: TimeSource { Date(timeIntervalSince1970: 1_700_000_000) }, publicURL: "https://gate.example.test")
        return try #require(
            try CaptureKind.make(descriptor: descriptor, settings: ConfigMap(Nodes.mapping(entries)), context: context) as? CaptureProvider)
    }

    @Test("registry: capture logs in by token and is legacy_capture")
    func registry() throws {
        let provider = try Self.make()
        #expect(ProviderRegistry.kinds["capture"] != nil)
        #expect(provider.loginStyle == .token)
        #expect(provider.capabilities.legacyCapture)
        #expect(!(provider is any PageScriptCapturing))
    }

    @Test("cookie: only from the success URL and a 2xx page, URL-decoded")
    func cookie() throws {
        let provider = try Self.make()
        let cookies = ["sid=1; Path=/", "oauth_token=abc%2Fdef; Path=/; HttpOnly"]
        #expect(provider.capture(url: "http://legacy.example.test/welcome?x=1", status: 200, setCookies: cookies, body: nil) == .token("abc/def"))
        #expect(provider.capture(url: "http://legacy.example.test/other", status: 200, setCookies: cookies, body: nil) == nil)
        #expect(provider.capture(url: "http://legacy.example.test/welcome", status: 302, setCookies: cookies, body: nil) == nil)
        #expect(provider.capture(url: "http://legacy.example.test/welcome", status: 200, setCookies: ["sid=1"], body: nil) == nil)
    }

    @Test("a success_url without `*` names the page, whatever its query; with `*` it is a pattern")
    func successPage() {
        #expect(CaptureProvider.matches("http://legacy.example.test/welcome?lang=nb", pattern: "http://legacy.example.test/welcome"))
        #expect(CaptureProvider.matches("http://legacy.example.test/welcome", pattern: "http://legacy.example.test/welcome"))
        #expect(!CaptureProvider.matches("http://legacy.example.test/welcome/x", pattern: "http://legacy.example.test/welcome"))
        #expect(!CaptureProvider.matches("http://legacy.example.test/welcomes?lang=nb", pattern: "http://legacy.example.test/welcome"))
        #expect(!CaptureProvider.matches("http://legacy.example.test/welcome?lang=nb", pattern: "http://legacy.example.test/welcome?lang=en"))
        #expect(CaptureProvider.matches("http://legacy.example.test/welcome/x", pattern: "http://legacy.example.test/welcome*"))
    }

    @Test("title: `Success oauth_token=…`, case-insensitive prefix; `Denied error=…` ends the login with that error")
    func title() throws {
        let provider = try Self.make(from: "title")
        func page(_ title: String) -> String { "<html><head><title>\(title)</title></head><body></body></html>" }
        #expect(
            provider.capture(
                url: "http://legacy.example.test/welcome", status: 200, setCookies: [], body: page("Success oauth_token=t-1&amp;state=s"))
                == .token("t-1"))
        #expect(
            provider.capture(url: "http://legacy.example.test/welcome", status: 200, setCookies: [], body: page(" SUCCESS oauth_token=t-2 "))
                == .token("t-2"))
        #expect(
            provider.capture(url: "http://legacy.example.test/welcome", status: 200, setCookies: [], body: page("Denied error=access_denied"))
                == .denied(code: "access_denied"))
        // A refusal ends the login wherever the site shows it, whatever the status.
        #expect(
            provider.capture(url: "http://legacy.example.test/login", status: 401, setCookies: [], body: page("Denied error=temporarily_unavailable"))
                == .denied(code: "temporarily_unavailable"))
        #expect(
            provider.capture(url: "http://legacy.example.test/login", status: 200, setCookies: [], body: page("Denied error=<script>"))
                == .denied(code: "access_denied"))
        #expect(provider.capture(url: "http://legacy.example.test/login", status: 200, setCookies: [], body: page("Deniedly yours")) == nil)
        #expect(provider.capture(url: "http://legacy.example.test/welcome", status: 200, setCookies: ["oauth_token=x"], body: page("Welcome")) == nil)
    }

    @Test("the probe validates the token (Bearer by default) and gives the identity")
    func probe() async throws {
        let transport = FakeTransport([.json("{\"id\":42,\"email\":\"bob@example.test\",\"name\":\"Bob\"}"), .json("{}", status: 401)])
        let provider = try Self.make(transport: transport)
        let result = try await provider.validateToken("tok-1")
        #expect(result.identity.subject == "42")
        #expect(result.identity.email == "bob@example.test")
        #expect(transport.requests.first?.header("Authorization") == "Bearer tok-1")
        await #expect(throws: ProviderError.rejected(code: "invalid_token", description: "the site does not accept the captured token")) {
            try await provider.validateToken("tok-2")
        }
        await #expect(throws: ProviderError.self) { try await provider.validateToken("bad token") }
    }

    @Test("the URL pattern: * matches any run")
    func pattern() {
        #expect(CaptureProvider.matches("http://a/welcome", pattern: "http://a/welcome*"))
        #expect(CaptureProvider.matches("http://a/x/done", pattern: "http://a/*/done"))
        #expect(!CaptureProvider.matches("http://a/x/done/more", pattern: "http://a/*/done"))
        #expect(!CaptureProvider.matches("http://b/welcome", pattern: "http://a/welcome*"))
    }

    @Test("configuration refuses a success_url off the allowed origins and a missing probe")
    func configuration() {
        #expect(throws: ConfigError.self) {
            _ = try Self.make(extra: [("success_url", Nodes.scalar("http://evil.test/*", line: 20))])
        }
    }
}
