import Crypto
import Foundation
import GatehouseConfiguration
import SwiftASN1
import Testing
import X509

@testable import GatehouseServer

/// The TLS pair new connections get: swapped whole on a good reload, kept on a refused one; the expiry gauge.
struct TLSContextStoreTests {
    /// A self-signed P-256 leaf and its key, as PEM.
    static func pair(notAfter: Date = Date().addingTimeInterval(30 * 86400)) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: notAfter, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions {}, issuerPrivateKey: .init(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    @Test func reloadSwapsAGoodPairAndKeepsTheOldOneOtherwise() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificateFile = directory + "/cert.pem"
        let keyFile = directory + "/key.pem"
        let first = try Self.pair()
        try first.certificate.write(toFile: certificateFile, atomically: true, encoding: .utf8)
        try first.key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let metrics = GatewayMetrics()
        let store = try TLSContextStore(
            configuration: .init(certificateFile: certificateFile, privateKeyFile: keyFile), metrics: metrics)
        let original = store.current
        #expect(metrics.render().contains("gatehouse_tls_certificate_expiry_timestamp_seconds "))

        // A key of another pair: refused, the context stays.
        try Self.pair().key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        #expect(throws: TLSCertificatePair.Problem.mismatch) { try store.reload() }
        #expect(store.current === original)
        // An unreadable key: refused too.
        try FileManager.default.removeItem(atPath: keyFile)
        #expect(throws: TLSCertificatePair.Problem.self) { try store.reload() }
        #expect(store.current === original)

        // A good new pair: new connections get it; the gauge follows its leaf.
        let expiry = Date().addingTimeInterval(60 * 86400)
        let second = try Self.pair(notAfter: expiry)
        try second.certificate.write(toFile: certificateFile, atomically: true, encoding: .utf8)
        try second.key.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let loaded = try store.reload()
        #expect(store.current !== original)
        #expect(abs(loaded.notValidAfter.timeIntervalSince(expiry)) < 2)
        #expect(metrics.render().contains("gatehouse_tls_certificate_expiry_timestamp_seconds \(Int(loaded.notValidAfter.timeIntervalSince1970))"))
    }

    @Test func redirectKeepsThePathAndQueryUnderPublicURL() {
        #expect(HTTPSRedirect.location(publicURL: "https://gw.example.com", target: "/v1/session?a=1") == "https://gw.example.com/v1/session?a=1")
        #expect(HTTPSRedirect.location(publicURL: "https://gw.example.com", target: "//evil.example/x") == "https://gw.example.com//evil.example/x")
        #expect(HTTPSRedirect.location(publicURL: "https://gw.example.com", target: "http://evil.example/x") == "https://gw.example.com/")
        #expect(HTTPSRedirect.location(publicURL: "https://gw.example.com", target: "*") == "https://gw.example.com/")
    }

    @Test func alpnOffersH2FirstOnlyWhenHTTP2IsOn() {
        #expect(TLSContextStore.applicationProtocols(http2: true) == ["h2", "http/1.1"])
        #expect(TLSContextStore.applicationProtocols(http2: false) == ["http/1.1"])
    }
}
