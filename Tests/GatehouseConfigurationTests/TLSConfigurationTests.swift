import Crypto
import Foundation
import GatehouseConfiguration
import GatehouseCore
import SwiftASN1
import Testing
import X509

/// `tls:` and `redirect_http_listen`: the keys, and the pair read and checked at load (as `gatehouse check` and
/// start-up do).
struct TLSConfigurationTests {
    /// A self-signed P-256 leaf and its key, as PEM, valid until `notAfter`.
    static func pair(notAfter: Date = Date().addingTimeInterval(90 * 86400)) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: notAfter.addingTimeInterval(-365 * 86400), notValidAfter: notAfter, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions {}, issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// A directory with `cert.pem` and `key.pem` (a good pair unless told otherwise) and `gatehouse.yaml`.
    static func load(
        _ yaml: String, certificate: String? = nil, key: String? = nil, environment: [String: String] = [:]
    ) throws -> (file: String, result: Result<GatewayConfiguration, ConfigurationErrors>) {
        let directory = try TemporaryDirectory()
        let good = try pair()
        _ = try directory.write("cert.pem", certificate ?? good.certificate)
        _ = try directory.write("key.pem", key ?? good.key)
        let file = try directory.write("gatehouse.yaml", yaml)
        do {
            return (file, .success(try GatewayConfiguration.load(path: file, environment: environment)))
        } catch let errors as ConfigurationErrors {
            return (file, .failure(errors))
        }
    }

    static let section = "tls:\n  certificate_file: cert.pem\n  private_key_file: key.pem\n"

    @Test func readsTheBlockWithDefaults() throws {
        let (file, result) = try Self.load("listen: \"127.0.0.1:8443\"\n" + Self.section)
        let configuration = try result.get()
        let tls = try #require(configuration.tls)
        #expect(tls.certificateFile.hasSuffix("/cert.pem"))
        #expect(tls.privateKeyFile.hasSuffix("/key.pem"))
        #expect(tls.minimumVersion == .tls12)
        #expect(tls.http2)
        #expect(tls.hstsSeconds == 0)
        #expect(tls.certificateLocation == "\(file):3")
        #expect(tls.certificateExpiry > Date().addingTimeInterval(80 * 86400))
        #expect(tls.expiryWarning() == nil)
        // Without an explicit public_url, it follows listen with https.
        #expect(configuration.publicURL == "https://127.0.0.1:8443")
        #expect(configuration.redirectHTTPListen == nil)
    }

    @Test func readsEveryKey() throws {
        let yaml =
            Self.section + "  min_version: \"1.3\"\n  http2: false\n  hsts_seconds: 31536000\n"
            + "public_url: \"https://gw.example.com\"\nredirect_http_listen: \"127.0.0.1:8080\"\n"
        let configuration = try Self.load(yaml).result.get()
        #expect(configuration.tls?.minimumVersion == .tls13)
        #expect(configuration.tls?.http2 == false)
        #expect(configuration.tls?.hstsSeconds == 31_536_000)
        #expect(configuration.redirectHTTPListen == ListenAddress(host: "127.0.0.1", port: 8080))
    }

    @Test func withoutTLSNothingChanges() throws {
        let configuration = try Self.load("listen: \"127.0.0.1:8081\"\n").result.get()
        #expect(configuration.tls == nil)
        #expect(configuration.publicURL == "http://127.0.0.1:8081")
        // A block whose every key is empty is no TLS either.
        #expect(try Self.load("tls:\n  certificate_file:\n  min_version:\n").result.get().tls == nil)
        #expect(try Self.load(Self.section + "  min_version: 1.3\n").result.get().tls?.minimumVersion == .tls13)
    }

    @Test func environmentSetsTheKeys() throws {
        let configuration = try Self.load(Self.section, environment: ["GATEHOUSE_TLS_MIN_VERSION": "1.3", "GATEHOUSE_TLS_HSTS_SECONDS": "60"])
            .result.get()
        #expect(configuration.tls?.minimumVersion == .tls13)
        #expect(configuration.tls?.hstsSeconds == 60)
        #expect(configuration.environmentVariables.contains("GATEHOUSE_TLS_MIN_VERSION"))
    }

    static let cases: [(yaml: String, expected: String)] = [
        (section + "  min_version: \"1.1\"\n", "4: 'tls.min_version' must be one of 1.2, 1.3, not '1.1'"),
        (section + "  hsts_seconds: -1\n", "4: 'tls.hsts_seconds' must be zero or a positive number of seconds, not -1"),
        (section + "  http_2: true\n", "4: unknown key 'tls.http_2': did you mean 'tls.http2'?"),
        ("tls:\n  private_key_file: key.pem\n", "1: 'tls.certificate_file' is required"),
        ("tls:\n  certificate_file: missing.pem\n  private_key_file: key.pem\n", "2: 'tls.certificate_file': cannot read the certificate file"),
        ("tls:\n  certificate_file: cert.pem\n  private_key_file: missing.pem\n", "3: 'tls.private_key_file': cannot read the private key file"),
        ("tls:\n  certificate_file: key.pem\n  private_key_file: key.pem\n", "2: 'tls.certificate_file': "),
        (section + "public_url: \"http://gw.example.com\"\n", "4: 'public_url' must be https when 'tls' is set, not 'http://gw.example.com'"),
        ("redirect_http_listen: \"127.0.0.1:8080\"\n", "1: 'redirect_http_listen' needs 'tls': it redirects plain HTTP to the HTTPS listener"),
        (section + "redirect_http_listen: \"eighty\"\n", "4: 'redirect_http_listen' must be host:port (e.g. 0.0.0.0:80), not 'eighty'"),
    ]

    @Test(arguments: cases)
    func reportsProblemsAtTheirLine(_ errorCase: (yaml: String, expected: String)) throws {
        let (file, result) = try Self.load(errorCase.yaml)
        guard case .failure(let errors) = result else {
            Issue.record("expected an error")
            return
        }
        #expect(errors.lines.count == 1)
        #expect(errors.lines.first?.hasPrefix("\(file):\(errorCase.expected)") == true, "\(errors.lines)")
    }

    @Test func keyOfAnotherCertificateIsRefusedAtTheKey() throws {
        let other = try Self.pair()
        let (file, result) = try Self.load(Self.section, key: other.key)
        guard case .failure(let errors) = result else {
            Issue.record("expected an error")
            return
        }
        #expect(
            errors.lines == [
                "\(file):3: 'tls.private_key_file': the private key does not match the certificate (the first one of the chain)"
            ])
    }

    @Test func expiredCertificateIsRefused() throws {
        let expired = try Self.pair(notAfter: Date().addingTimeInterval(-86400))
        let (file, result) = try Self.load(Self.section, certificate: expired.certificate, key: expired.key)
        guard case .failure(let errors) = result else {
            Issue.record("expected an error")
            return
        }
        #expect(errors.lines.count == 1)
        #expect(errors.lines.first?.hasPrefix("\(file):2: 'tls.certificate_file': the certificate expired on ") == true, "\(errors.lines)")
    }

    @Test func certificateExpiringSoonIsWarnedAbout() throws {
        let soon = try Self.pair(notAfter: Date().addingTimeInterval(5 * 86400 + 600))
        let (file, result) = try Self.load(Self.section, certificate: soon.certificate, key: soon.key)
        let warning = try #require(try result.get().tls?.expiryWarning())
        #expect(warning.hasPrefix("\(file):2: the certificate expires on "))
        #expect(warning.hasSuffix("(in 5 days): renew it and send SIGHUP"))
    }

    @Test func privateKeyNeverAppearsInAMessage() throws {
        let good = try Self.pair()
        let garbled = good.key.replacingOccurrences(of: "\n-----END", with: "AAAA\n-----END")
        let (_, result) = try Self.load(Self.section, key: garbled)
        guard case .failure(let errors) = result else {
            Issue.record("expected an error")
            return
        }
        let body = good.key.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
        #expect(!errors.lines.joined().contains(body))
        #expect(errors.lines.first?.contains("'tls.private_key_file'") == true)
    }
}
