import Foundation
import GatehouseConfiguration
import GatehouseCore
import Testing

/// `outbound_tls:` and the `tls:` of `backend` and `upstreams:`: the keys, relative paths, what an upstream takes
/// of `backend`'s, and the files read and checked at load.
struct OutboundTLSConfigurationTests {
    /// A directory with `ca.pem`, `client.pem` and `client.key` (a good pair) and `gatehouse.yaml`.
    static func load(_ yaml: String) throws -> (file: String, result: Result<GatewayConfiguration, ConfigurationErrors>) {
        let directory = try TemporaryDirectory()
        let pair = try TLSConfigurationTests.pair()
        _ = try directory.write("ca.pem", pair.certificate)
        _ = try directory.write("client.pem", pair.certificate)
        _ = try directory.write("client.key", pair.key)
        let file = try directory.write("gatehouse.yaml", yaml)
        do {
            return (file, .success(try GatewayConfiguration.load(path: file, environment: [:])))
        } catch let errors as ConfigurationErrors {
            return (file, .failure(errors))
        }
    }

    @Test func readsTheKeysWithRelativePathsResolved() throws {
        let (file, result) = try Self.load(
            """
            outbound_tls: {ca_files: ["ca.pem"], system_roots: false}
            backend:
              url: "https://10.0.4.7:8443"
              tls: {ca_file: "ca.pem", client_certificate_file: "client.pem", client_key_file: "client.key", server_name: "app.internal"}
            upstreams:
              - {name: "billing", prefix: "/billing", url: "https://billing.internal"}
            """)
        let configuration = try result.get()
        let directory = (file as NSString).deletingLastPathComponent
        #expect(configuration.outboundTLS == .init(caFiles: [directory + "/ca.pem"], systemRoots: false))
        #expect(
            configuration.backend.tls
                == .init(
                    caFile: directory + "/ca.pem", clientCertificateFile: directory + "/client.pem", clientKeyFile: directory + "/client.key",
                    serverName: "app.internal"))
        // Another host: an upstream never takes `backend`'s CA, certificate or name.
        #expect(configuration.upstreams[0].backend.tls == nil)
    }

    @Test func theDefaultsTrustTheSystemRootsOnly() throws {
        let configuration = try Self.load("store: {kind: \"memory\"}\n").result.get()
        #expect(configuration.outboundTLS == .init())
        #expect(configuration.outboundTLS.systemRoots)
        #expect(configuration.backend.tls == nil)
    }

    @Test func everyBadFileAndHalfPairIsReportedAtItsLine() throws {
        let (file, result) = try Self.load(
            """
            outbound_tls:
              ca_files: ["missing.pem"]
            backend:
              url: "https://127.0.0.1:1"
              tls:
                client_certificate_file: "client.pem"
                server_name: "https://app"
            forward_auth:
              apps:
                - {name: "wiki", hosts: ["wiki.example.com"], tls: {ca_file: "ca.pem"}}
            """)
        guard case .failure(let errors) = result else {
            Issue.record("loaded")
            return
        }
        let lines = errors.errors.map { "\($0.line): \($0.message)" }
        #expect(lines.contains { $0.hasPrefix("2: 'outbound_tls.ca_files[0]': cannot read the certificate file") })
        #expect(lines.contains { $0.hasPrefix("6: 'backend.tls.client_certificate_file' needs 'backend.tls.client_key_file'") })
        #expect(lines.contains { $0.hasPrefix("7: 'backend.tls.server_name' is a host name") })
        #expect(lines.contains { $0.hasPrefix("10: 'forward_auth.apps[0].tls' is not an app's") })
        #expect(errors.errors.allSatisfy { $0.file == file })
    }
}
