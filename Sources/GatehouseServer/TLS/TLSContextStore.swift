import Foundation
import GatehouseConfiguration
import NIOSSL
import Synchronization

/// The TLS context new connections are given: built from `tls:`'s certificate and key, and replaced as a
/// whole by ``reload()`` (SIGHUP). A connection takes the current context when it is accepted and keeps it,
/// so open connections go on with the pair they began with.
final class TLSContextStore: Sendable {
    /// `tls:` as configured.
    let configuration: GatewayConfiguration.TLS
    private let metrics: GatewayMetrics?
    private let state: Mutex<NIOSSLContext>

    /// - Parameters:
    ///   - configuration: `tls:`.
    ///   - metrics: where the leaf's expiry is published (`gatehouse_tls_certificate_expiry_timestamp_seconds`).
    /// - Throws: ``TLSCertificatePair/Problem``, or NIOSSL's error when the pair cannot make a context.
    init(configuration: GatewayConfiguration.TLS, metrics: GatewayMetrics?) throws {
        self.configuration = configuration
        self.metrics = metrics
        let (context, pair) = try Self.makeContext(configuration)
        state = Mutex(context)
        metrics?.tlsCertificateExpires(at: pair.notValidAfter)
    }

    /// The context for a connection accepted now.
    var current: NIOSSLContext { state.withLock { $0 } }

    /// Reads the certificate and key files again; the new pair serves new connections from now on. A pair
    /// that cannot be read, whose key does not match, or that has expired is refused and the current one kept.
    /// - Returns: the new pair.
    @discardableResult
    func reload() throws -> TLSCertificatePair {
        let (context, pair) = try Self.makeContext(configuration)
        state.withLock { $0 = context }
        metrics?.tlsCertificateExpires(at: pair.notValidAfter)
        return pair
    }

    /// ALPN: `h2` first when HTTP/2 is on, then `http/1.1`.
    static func applicationProtocols(http2: Bool) -> [String] { http2 ? ["h2", "http/1.1"] : ["http/1.1"] }

    private static func makeContext(_ tls: GatewayConfiguration.TLS) throws -> (NIOSSLContext, TLSCertificatePair) {
        let pair = try TLSCertificatePair.load(certificateFile: tls.certificateFile, privateKeyFile: tls.privateKeyFile)
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(pair.certificatePEM.utf8)).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(bytes: Array(pair.privateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        // TLS 1.0 and 1.1 are never offered; the cipher suites are BoringSSL's defaults.
        configuration.minimumTLSVersion = tls.minimumVersion == .tls13 ? .tlsv13 : .tlsv12
        configuration.applicationProtocols = applicationProtocols(http2: tls.http2)
        return (try NIOSSLContext(configuration: configuration), pair)
    }
}
