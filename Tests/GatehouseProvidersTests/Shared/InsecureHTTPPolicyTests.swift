import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

/// No secrets in clear (``InsecureHTTPPolicy``): the rule itself, then each kind's provider file.
@Suite struct InsecureHTTPPolicyTests {
    // MARK: The rule

    @Test(
        "loopback hosts: localhost, 127.0.0.0/8 in dotted decimal, ::1 in any spelling",
        arguments: ["localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "127.255.255.255", "[::1]", "[0:0:0:0:0:0:0:1]", "[0000::0001]", "[::0:1]"])
    func loopback(host: String) {
        #expect(InsecureHTTPPolicy.isLoopback(host: host))
    }

    @Test(
        "not loopback: other addresses, look-alike names, short or odd IPv4 forms, mapped or zoned IPv6",
        arguments: [
            "", "128.0.0.1", "10.0.0.1", "127.0.0.1.example.test", "localhost.example.test", "mylocalhost", "127.1", "127.0.0.256",
            "0x7f.0.0.1", "127.0.0.+1", "[::2]", "[::]", "[::ffff:127.0.0.1]", "[fe80::1%25eth0]", "[1::1]", "[::+1]", "::1",
        ])
    func notLoopback(host: String) {
        #expect(!InsecureHTTPPolicy.isLoopback(host: host))
    }

    @Test("https is always permitted; http only to loopback, or everywhere with allow_insecure_http")
    func permits() {
        let strict = InsecureHTTPPolicy(allowsInsecureHTTP: false)
        #expect(strict.permits("https://idp.example.test/token"))
        #expect(strict.permits("http://127.0.0.1:8080/token"))
        #expect(strict.permits("http://[::1]:8080/token"))
        #expect(!strict.permits("http://idp.example.test/token"))
        #expect(!strict.permits("HTTP://idp.example.test/token"))
        #expect(!strict.permits("http://user@idp.example.test/token"))
        #expect(InsecureHTTPPolicy(allowsInsecureHTTP: true).permits("http://idp.example.test/token"))
    }

    // MARK: Each kind's provider file

    /// A provider file of one kind in which `key` holds the URL under test (`URL` in `pairs`).
    struct KindFile: Sendable, CustomTestStringConvertible {
        let kind: String
        let key: String
        let pairs: [(String, String)]

        var testDescription: String { "\(kind): \(key)" }

        /// The file's mapping: one key a line from line 1; `a.b` is `b` nested under `a` on the next line.
        func settings(url: String, extra: [(String, String)] = []) throws -> ConfigMap {
            var entries: [(String, Int, ConfigNode)] = []
            var line = 1
            for (key, value) in pairs + extra {
                let value = value == "URL" ? url : value
                let parts = key.split(separator: ".").map(String.init)
                if parts.count == 2 {
                    entries.append((parts[0], line, Nodes.mapping([(parts[1], line + 1, Nodes.scalar(value, line: line + 1))], line: line)))
                    line += 2
                } else {
                    entries.append((key, line, Nodes.scalar(value, line: line)))
                    line += 1
                }
            }
            return try ConfigMap(Nodes.mapping(entries))
        }

        /// The line of `key` in ``settings(url:extra:)``.
        var line: Int {
            var line = 1
            for (name, _) in pairs {
                if name == key { return key.contains(".") ? line + 1 : line }
                line += name.contains(".") ? 2 : 1
            }
            return 0
        }

        func make(url: String, extra: [(String, String)] = []) throws -> any AuthProvider {
            let kind = try #require(ProviderRegistry.kinds[kind])
            let context = ProviderContext(transport: FakeTransport(), publicURL: "https://gate.example.test")
            return try kind.make(
                descriptor: ProviderDescriptor(id: "example", kind: self.kind), settings: settings(url: url, extra: extra), context: context)
        }
    }

    static let files: [KindFile] = [
        KindFile(
            kind: "oauth2", key: "token_endpoint",
            pairs: [("authorization_endpoint", "https://as.example.test/authorize"), ("token_endpoint", "URL"), ("client_id", "c")]),
        KindFile(
            kind: "oauth2", key: "userinfo_endpoint",
            pairs: [
                ("authorization_endpoint", "https://as.example.test/authorize"), ("token_endpoint", "https://as.example.test/token"),
                ("client_id", "c"),
                ("userinfo_endpoint", "URL"),
            ]),
        KindFile(
            kind: "oauth2", key: "revocation_endpoint",
            pairs: [
                ("authorization_endpoint", "https://as.example.test/authorize"), ("token_endpoint", "https://as.example.test/token"),
                ("revocation_endpoint", "URL"), ("client_id", "c"),
            ]),
        KindFile(
            kind: "oauth2", key: "api.url",
            pairs: [
                ("authorization_endpoint", "https://as.example.test/authorize"), ("token_endpoint", "https://as.example.test/token"),
                ("client_id", "c"),
                ("api.url", "URL"),
            ]),
        KindFile(kind: "spid", key: "base_url", pairs: [("base_url", "URL"), ("client_id", "c")]),
        KindFile(
            kind: "spid", key: "token_endpoint", pairs: [("base_url", "https://spid.example.test"), ("client_id", "c"), ("token_endpoint", "URL")]),
        KindFile(
            kind: "spid", key: "logout_endpoint", pairs: [("base_url", "https://spid.example.test"), ("logout_endpoint", "URL"), ("client_id", "c")]),
        KindFile(kind: "oidc", key: "issuer", pairs: [("issuer", "URL"), ("client_id", "c")]),
        KindFile(
            kind: "oidc", key: "token_endpoint", pairs: [("issuer", "https://idp.example.test"), ("client_id", "c"), ("token_endpoint", "URL")]),
        KindFile(kind: "oidc", key: "jwks_uri", pairs: [("issuer", "https://idp.example.test"), ("jwks_uri", "URL"), ("client_id", "c")]),
        KindFile(
            kind: "acs", key: "jwks_url",
            pairs: [
                ("login_url", "https://acs.example.test/login"), ("allowed_origins", "https://acs.example.test"), ("realm", "urn:app"),
                ("issuer", "https://acs.example.test/"), ("token_format", "jwt"), ("jwks_url", "URL"),
            ]),
        KindFile(
            kind: "browserid", key: "remote_verifier_url",
            pairs: [
                ("audiences", "https://gate.example.test"), ("verifier", "remote"), ("remote_verifier_url", "URL"),
            ]),
        KindFile(
            kind: "capture", key: "probe.url",
            pairs: [
                ("login_url", "http://legacy.example.test/login"), ("allowed_origins", "http://legacy.example.test"),
                ("success_url", "http://legacy.example.test/welcome*"), ("probe.url", "URL"),
            ]),
    ]

    @Test("an http URL to a non-loopback host is refused at its line, with the key, the URL and the way out", arguments: files)
    func refused(file: KindFile) throws {
        let url = "http://idp.example.test/x"
        let error = try #require(throws: ConfigErrorList.self) { try file.make(url: url) }
        #expect(error.errors.count == 1)
        #expect(error.errors.first?.file == Nodes.file)
        #expect(error.errors.first?.line == file.line)
        #expect(error.description.hasPrefix("\(Nodes.file):\(file.line): '\(file.key)' must be https, not '\(url)': "))
        #expect(error.description.contains("loopback"))
        #expect(error.description.contains("'allow_insecure_http: true'"))
    }

    @Test("an http URL to a loopback host is accepted", arguments: files)
    func loopbackAccepted(file: KindFile) throws {
        for host in ["127.0.0.1:9", "127.8.9.10", "[::1]:8443", "localhost:8080"] {
            _ = try file.make(url: "http://\(host)/x")
        }
    }

    @Test("allow_insecure_http: true accepts an http URL to any host; https needs nothing", arguments: files)
    func allowedAndHTTPS(file: KindFile) throws {
        _ = try file.make(url: "http://idp.example.test/x", extra: [("allow_insecure_http", "true")])
        _ = try file.make(url: "https://idp.example.test/x")
        #expect(throws: ConfigErrorList.self) { try file.make(url: "http://idp.example.test/x", extra: [("allow_insecure_http", "false")]) }
    }

    @Test("every refused URL of a file is reported at once, in file order")
    func allAtOnce() throws {
        let file = KindFile(
            kind: "oauth2", key: "token_endpoint",
            pairs: [
                ("authorization_endpoint", "http://as.example.test/authorize"), ("token_endpoint", "URL"), ("userinfo_endpoint", "URL"),
                ("revocation_endpoint", "https://as.example.test/revoke"), ("client_id", "c"), ("api.url", "URL"),
            ])
        let error = try #require(throws: ConfigErrorList.self) { try file.make(url: "http://as.example.test/x") }
        #expect(error.errors.map(\.line) == [2, 3, 7])
        #expect(error.errors.map { $0.message.prefix(while: { $0 != " " }) } == ["'token_endpoint'", "'userinfo_endpoint'", "'api.url'"])
    }
}
