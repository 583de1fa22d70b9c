import Crypto
import Foundation
import GatehouseConfiguration
import NIOSSL
import SwiftASN1
import Testing
import X509

@testable import GatehouseServer

/// Which certificates an outbound client trusts given `outbound_tls`, a `ca_file` and the environment's
/// `SSL_CERT_FILE` / `SSL_CERT_DIR`, and what it presents.
struct OutboundTLSTests {
    /// A self-signed P-256 certificate named `name`, and its key, as PEM.
    static func authority(_ name: String) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400), issuer: subject,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// A fresh directory with a file per (name, text).
    static func directory(_ files: [String: String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-outbound-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8) }
        return directory
    }

    /// The additional roots a configuration trusts.
    static func trusted(_ tls: TLSConfiguration) -> [NIOSSLCertificate] {
        tls.additionalTrustRoots.flatMap { roots -> [NIOSSLCertificate] in
            if case .certificates(let certificates) = roots { return certificates }
            return []
        }
    }

    static func certificate(_ pem: String) throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)
    }

    @Test func byDefaultOnlyTheSystemRootsAreTrusted() throws {
        let tls = try OutboundTLS(environment: [:]).configuration()
        #expect(tls.trustRoots == .default)
        #expect(Self.trusted(tls).isEmpty)
        #expect(tls.certificateChain.isEmpty)
    }

    @Test func caFilesAddToTheSystemRootsAndSystemRootsFalseDropsThem() throws {
        let corp = try Self.authority("Corp Root")
        let directory = try Self.directory(["corp.pem": corp.certificate])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let with = try OutboundTLS(caFiles: [directory + "/corp.pem"], environment: [:]).configuration()
        #expect(with.trustRoots == .default)
        #expect(Self.trusted(with) == [try Self.certificate(corp.certificate)])
        let only = try OutboundTLS(systemRoots: false, caFiles: [directory + "/corp.pem"], environment: [:]).configuration()
        #expect(only.trustRoots == .certificates([]))
        #expect(Self.trusted(only) == [try Self.certificate(corp.certificate)])
    }

    @Test func sslCertFileAndSslCertDirAreReadAsOpenSSLDoes() throws {
        let bundle = try Self.authority("Bundle Root")
        let first = try Self.authority("Directory Root 1")
        let second = try Self.authority("Directory Root 2")
        let files = try Self.directory(["bundle.pem": bundle.certificate])
        let certificates = try Self.directory(["one.pem": first.certificate, "two.crt": second.certificate, "README": "not a certificate\n"])
        defer {
            try? FileManager.default.removeItem(atPath: files)
            try? FileManager.default.removeItem(atPath: certificates)
        }
        // A hash link as c_rehash makes: the certificate it points at is trusted once.
        try FileManager.default.createSymbolicLink(atPath: certificates + "/abcdef01.0", withDestinationPath: certificates + "/one.pem")
        let environment = ["SSL_CERT_FILE": files + "/bundle.pem", "SSL_CERT_DIR": certificates + ":/nonexistent-gatehouse-dir"]
        let trusted = Self.trusted(try OutboundTLS(environment: environment).configuration())
        #expect(Set(trusted) == Set([bundle.certificate, first.certificate, second.certificate].map { try! Self.certificate($0) }))
        #expect(trusted.count == 3)
        // Set but empty: as if unset.
        #expect(Self.trusted(try OutboundTLS(environment: ["SSL_CERT_FILE": "", "SSL_CERT_DIR": ""]).configuration()).isEmpty)
    }

    /// Images often set both to the system's own store: with the system roots trusted anyway, they are not read
    /// again (6 MiB of memory for ~150 certificates); with `system_roots: false` they are what is trusted.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt")))
    func environmentVariablesNamingTheSystemStoreAreNotReadTwice() throws {
        let environment = ["SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt", "SSL_CERT_DIR": "/etc/ssl/certs"]
        #expect(try OutboundTLS(systemRoots: true, environment: environment).certificates.isEmpty)
        #expect(try !OutboundTLS(systemRoots: false, environment: environment).certificates.isEmpty)
    }

    @Test func anSslCertFileThatCannotBeReadIsAnErrorThatNamesIt() throws {
        #expect(throws: OutboundTLSError("SSL_CERT_FILE: cannot read the certificate file '/nonexistent/bundle.pem'")) {
            try OutboundTLS(environment: ["SSL_CERT_FILE": "/nonexistent/bundle.pem"])
        }
        let directory = try Self.directory(["empty.pem": "nothing here\n"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: OutboundTLSError.self) { try OutboundTLS(caFiles: [directory + "/empty.pem"], environment: [:]) }
    }

    @Test func aCAFileAddsToTheTrustForItsOwnUseOnly() throws {
        let corp = try Self.authority("Corp Root")
        let app = try Self.authority("App CA")
        let directory = try Self.directory(["corp.pem": corp.certificate, "app.pem": app.certificate + "\n" + corp.certificate])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outbound = try OutboundTLS(caFiles: [directory + "/corp.pem"], environment: [:])
        // The corporate root is in both files: trusted once.
        #expect(
            Self.trusted(try outbound.configuration(caFile: directory + "/app.pem"))
                == [corp.certificate, app.certificate].map { try! Self.certificate($0) })
        #expect(Self.trusted(try outbound.configuration()) == [try Self.certificate(corp.certificate)])
    }

    @Test func aClientCertificateAndKeyArePresented() throws {
        let client = try Self.authority("gatehouse-client")
        let directory = try Self.directory(["client.pem": client.certificate, "client.key": client.key])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tls = try OutboundTLS(environment: [:]).configuration(
            clientCertificateFile: directory + "/client.pem", clientKeyFile: directory + "/client.key")
        #expect(tls.certificateChain == [.certificate(try Self.certificate(client.certificate))])
        #expect(tls.privateKey != nil)
    }

    @Test func theTrustInForceIsTheClientsOwnUntilAReload() throws {
        let corp = try Self.authority("Corp Root")
        let app = try Self.authority("App CA")
        let directory = try Self.directory(["corp.pem": corp.certificate, "app.pem": app.certificate])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let trust = try OutboundTrust(OutboundTLS(environment: [:]))
        #expect(try trust.configuration(caFile: nil) == nil)
        let provider = try #require(try trust.configuration(caFile: directory + "/app.pem"))
        #expect(Self.trusted(provider) == [try Self.certificate(app.certificate)])
        try trust.replace(with: OutboundTLS(caFiles: [directory + "/corp.pem"], environment: [:]))
        let reloaded = try #require(try trust.configuration(caFile: nil))
        #expect(Self.trusted(reloaded) == [try Self.certificate(corp.certificate)])
        // The provider's is made again over the new trust.
        #expect(Self.trusted(try #require(try trust.configuration(caFile: directory + "/app.pem"))).count == 2)
    }

    @Test func anUpstreamWithAServerNameIsAddressedToTheNameAndConnectedToItsHost() throws {
        let plan = try #require(
            UpstreamTLSPlan(
                url: "https://127.0.0.1:8443/app", tls: .init(serverName: "app.internal"), outbound: OutboundTLS(environment: [:])))
        #expect(plan.named?.origin == "https://127.0.0.1:8443")
        #expect(plan.named?.namedOrigin == "https://app.internal:8443")
        #expect(plan.named?.host == "127.0.0.1")
        #expect(
            UpstreamTLSPlan(url: "http://127.0.0.1:9000", tls: .init(serverName: "app.internal"), outbound: try OutboundTLS(environment: [:])) == nil)
        let missing = try #require(
            UpstreamTLSPlan(url: "https://app.internal", tls: .init(caFile: "/nonexistent/ca.pem"), outbound: OutboundTLS(environment: [:])))
        #expect(throws: OutboundTLSError.self) { try missing.configuration.get() }
    }
}
