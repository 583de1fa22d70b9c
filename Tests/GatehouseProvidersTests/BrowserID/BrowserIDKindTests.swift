import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

@Suite struct BrowserIDKindTests {
    static let descriptor = ProviderDescriptor(id: "persona", kind: "browserid")
    static let context = ProviderContext(
        transport: FakeTransport(), clock: TimeSource { BrowserIDFixture.now }, publicURL: "https://gate.example.test")

    static func make(_ entries: [(String, ConfigNode)]) throws -> BrowserIDProvider {
        let node = Nodes.mapping(entries.enumerated().map { ($1.0, $0 + 5, $1.1) }, line: 5)
        return try #require(try BrowserIDKind.make(descriptor: descriptor, settings: ConfigMap(node), context: context) as? BrowserIDProvider)
    }

    static func message(_ entries: [(String, ConfigNode)]) -> String {
        do {
            _ = try make(entries)
            return "accepted"
        } catch {
            return "\(error)"
        }
    }

    static func pinnedFile() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("browserid-\(UUID().uuidString).json").path
        try BrowserIDFixture.supportDocument(BrowserIDFixture.issuerKey).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("the registry knows kind browserid, and its providers log in by assertion without refresh or revocation")
    func registry() throws {
        let kind = try #require(ProviderRegistry.kinds["browserid"])
        #expect(ObjectIdentifier(kind) == ObjectIdentifier(BrowserIDKind.self))
        let provider = try Self.make([("audiences", Nodes.scalar("https://rp.example.test", line: 5))])
        #expect(provider.loginStyle == .assertion)
        #expect(
            provider.capabilities
                == ProviderCapabilities(refresh: false, revocation: false, expiryKnown: false, userinfo: false, legacyCapture: false))
    }

    @Test("defaults: local verifier, fetching on, 30 s skew, one-hour sessions")
    func defaults() throws {
        let configuration = try Self.make([("audiences", Nodes.sequence(["https://rp.example.test", "rp.example.test:8080"], line: 5))]).configuration
        #expect(
            configuration.audiences == [
                BrowserIDAudience(scheme: "https", host: "rp.example.test", port: 443),
                BrowserIDAudience(scheme: "http", host: "rp.example.test", port: 8080),
            ])
        #expect(configuration.verifier == .local)
        #expect(configuration.fetchSupportDocuments)
        #expect(configuration.trustedSecondaries.isEmpty)
        #expect(configuration.clockSkew == 30)
        #expect(configuration.sessionLifetime == 3600)
    }

    @Test("every key is read: issuers with a pinned support document file, secondaries, skew, lifetime, remote")
    func allKeys() throws {
        let file = try Self.pinnedFile()
        let issuer = Nodes.mapping(
            [("domain", 7, Nodes.scalar("Example.com", line: 7)), ("support_document_file", 8, Nodes.scalar(file, line: 8))], line: 7)
        let provider = try Self.make([
            ("audiences", Nodes.scalar("https://rp.example.test", line: 5)),
            ("issuers", ConfigNode(.sequence([issuer]), file: Nodes.file, line: 6)),
            ("fetch_support_documents", Nodes.scalar("false", line: 9)),
            ("trusted_secondaries", Nodes.sequence(["example.com"], line: 10)),
            ("clock_skew_seconds", Nodes.scalar("5", line: 12)),
            ("session_lifetime_seconds", Nodes.scalar("600", line: 13)),
        ])
        #expect(provider.configuration.pinnedSupportDocuments.keys.sorted() == ["example.com"])
        #expect(!provider.configuration.fetchSupportDocuments)
        #expect(provider.configuration.trustedSecondaries == ["example.com"])
        #expect(provider.configuration.clockSkew == 5)
        #expect(provider.configuration.sessionLifetime == 600)

        let remote = try Self.make([
            ("audiences", Nodes.scalar("https://rp.example.test", line: 5)),
            ("verifier", Nodes.scalar("remote", line: 6)),
            ("remote_verifier_url", Nodes.scalar("https://verifier.example.test/verify", line: 7)),
        ])
        #expect(remote.configuration.verifier == .remote(url: "https://verifier.example.test/verify"))
    }

    @Test("mistakes are refused with file:line")
    func errors() throws {
        let audience = ("audiences", Nodes.scalar("https://rp.example.test", line: 5))
        #expect(Self.message([]) == "Providers/example.yaml:5: 'audiences' is required (the origins assertions are addressed to)")
        #expect(
            Self.message([("audiences", Nodes.scalar("ftp://x", line: 5))]).hasPrefix(
                "Providers/example.yaml:5: 'audiences': 'ftp://x' is not an origin"))
        #expect(
            Self.message([audience, ("verifier", Nodes.scalar("remote", line: 6))])
                == "Providers/example.yaml:6: 'remote_verifier_url' is required when verifier is remote")
        #expect(
            Self.message([audience, ("verifier", Nodes.scalar("magic", line: 6))])
                == "Providers/example.yaml:6: 'verifier' must be one of local, remote, not 'magic'")
        #expect(
            Self.message([audience, ("remote_verifier_url", Nodes.scalar("https://v.example/verify", line: 6))])
                == "Providers/example.yaml:6: 'remote_verifier_url' is only used with 'verifier: remote'")
        #expect(
            Self.message([audience, ("trusted_secondaries", Nodes.sequence(["bad/domain"], line: 6))])
                == "Providers/example.yaml:6: 'trusted_secondaries': 'bad/domain' is not a domain")
        #expect(
            Self.message([
                audience, ("fetch_support_documents", Nodes.scalar("false", line: 6)),
                ("trusted_secondaries", Nodes.sequence(["login.persona.org"], line: 7)),
            ])
                == "Providers/example.yaml:7: 'trusted_secondaries': 'login.persona.org' needs a pinned support document in 'issuers' when fetch_support_documents is false"
        )
        #expect(
            Self.message([audience, ("clock_skew_seconds", Nodes.scalar("900", line: 6))])
                == "Providers/example.yaml:6: 'clock_skew_seconds' must be between 0 and 300, not 900")
        #expect(Self.message([audience, ("client_id", Nodes.scalar("x", line: 6))]) == "Providers/example.yaml:6: unknown key 'client_id'")

        let missing = Nodes.mapping(
            [("domain", 7, Nodes.scalar("example.com", line: 7)), ("support_document_file", 8, Nodes.scalar("/nonexistent/doc.json", line: 8))],
            line: 7)
        #expect(
            Self.message([audience, ("issuers", ConfigNode(.sequence([missing]), file: Nodes.file, line: 6))])
                == "Providers/example.yaml:8: 'issuers[0].support_document_file': cannot read file '/nonexistent/doc.json'")
        let badPath = FileManager.default.temporaryDirectory.appendingPathComponent("browserid-bad-\(UUID().uuidString).json").path
        try #"{"public-key":{"algorithm":"XX"}}"#.write(toFile: badPath, atomically: true, encoding: .utf8)
        let bad = Nodes.mapping(
            [("domain", 7, Nodes.scalar("example.com", line: 7)), ("support_document_file", 8, Nodes.scalar(badPath, line: 8))], line: 7)
        #expect(
            Self.message([audience, ("issuers", ConfigNode(.sequence([bad]), file: Nodes.file, line: 6))]).hasPrefix(
                "Providers/example.yaml:8: 'issuers[0].support_document_file': "))
        let extra = Nodes.mapping(
            [
                ("domain", 7, Nodes.scalar("example.com", line: 7)), ("support_document_file", 8, Nodes.scalar(try Self.pinnedFile(), line: 8)),
                ("key", 9, Nodes.scalar("x", line: 9)),
            ], line: 7)
        #expect(
            Self.message([audience, ("issuers", ConfigNode(.sequence([extra]), file: Nodes.file, line: 6))])
                == "Providers/example.yaml:9: unknown key 'issuers[0].key'")
    }
}
