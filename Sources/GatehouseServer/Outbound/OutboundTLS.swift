public import Foundation
public import GatehouseConfiguration
public import NIOSSL

/// The one place that builds the TLS configuration of every outbound client: the provider calls, the router's
/// upstream client, the CLI's gateway client (and the relay's pools, for `https` upstreams).
///
/// What is trusted: the system's roots (unless `system_roots: false`), the certificates of `ca_files`, those of
/// `SSL_CERT_FILE` (a PEM bundle) and `SSL_CERT_DIR` (directories of PEM files, `:`-separated) when set, as
/// OpenSSL honours them, and the provider's or upstream's own `ca_file`. The files are read here, with
/// `NIOSSLCertificate.fromPEMFile`, not left to the TLS library's own handling of the environment.
///
/// ```swift
/// let outbound = try OutboundTLS(configuration.outboundTLS)
/// var client = HTTPClient.Configuration()
/// client.tlsConfiguration = try outbound.configuration()
/// ```
public struct OutboundTLS: Sendable {
    /// Whether the system's trust store is trusted.
    public let systemRoots: Bool
    /// The certificates trusted besides the system's: `ca_files`, then `SSL_CERT_FILE`, then `SSL_CERT_DIR`,
    /// without repeats.
    public let certificates: [NIOSSLCertificate]

    /// Reads `ca_files` and the environment's `SSL_CERT_FILE` / `SSL_CERT_DIR`.
    /// - Parameters:
    ///   - systemRoots: whether the system's trust store is trusted.
    ///   - caFiles: PEM bundles (absolute paths).
    ///   - environment: where `SSL_CERT_FILE` and `SSL_CERT_DIR` are looked up.
    /// - Throws: ``OutboundTLSError`` naming a file that cannot be read or holds no certificate.
    public init(systemRoots: Bool = true, caFiles: [String] = [], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.systemRoots = systemRoots
        var certificates: [NIOSSLCertificate] = []
        for file in caFiles { certificates += try Self.certificates(inFile: file) }
        certificates += try Self.environmentCertificates(environment, besidesSystemRoots: systemRoots)
        self.certificates = Self.unique(certificates)
    }

    /// The same for `outbound_tls:`.
    public init(_ configuration: GatewayConfiguration.OutboundTLS, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        try self.init(systemRoots: configuration.systemRoots, caFiles: configuration.caFiles, environment: environment)
    }

    /// A client configuration: this trust plus `caFile`'s certificates, presenting a client certificate when
    /// both files are given.
    /// - Parameters:
    ///   - caFile: a PEM bundle trusted for this use only (a provider's or an upstream's `tls.ca_file`).
    ///   - clientCertificateFile: PEM chain, leaf first.
    ///   - clientKeyFile: its private key (PEM).
    public func configuration(caFile: String? = nil, clientCertificateFile: String? = nil, clientKeyFile: String? = nil) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        var trusted = certificates
        if let caFile { trusted = Self.unique(trusted + (try Self.certificates(inFile: caFile))) }
        tls.trustRoots = systemRoots ? .default : .certificates([])
        if !trusted.isEmpty { tls.additionalTrustRoots = [.certificates(trusted)] }
        if let clientCertificateFile, let clientKeyFile {
            tls.certificateChain = try Self.certificates(inFile: clientCertificateFile).map { .certificate($0) }
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: clientKeyFile, format: .pem))
            } catch {
                throw OutboundTLSError("'\(clientKeyFile)' holds no PEM private key that can be read")
            }
        }
        return tls
    }

    /// The certificates of a PEM file.
    /// - Throws: ``OutboundTLSError`` when the file cannot be read or holds none.
    public static func certificates(inFile path: String) throws -> [NIOSSLCertificate] {
        guard FileManager.default.isReadableFile(atPath: path) else { throw OutboundTLSError("cannot read the certificate file '\(path)'") }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw OutboundTLSError("'\(path)' holds a certificate that cannot be parsed, or no PEM certificate")
        }
        guard !certificates.isEmpty else { throw OutboundTLSError("'\(path)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)") }
        return certificates
    }

    /// What OpenSSL trusts from the environment: `SSL_CERT_FILE`, a PEM bundle (an error when it cannot be
    /// read: it was named), and every PEM certificate file of the directories of `SSL_CERT_DIR` (`:`-separated;
    /// other files, and directories that do not exist, are passed over as OpenSSL does). `besidesSystemRoots`:
    /// the system's roots are trusted anyway, so a variable that names the system's own store (Debian's
    /// `/etc/ssl/certs`, which many images set) adds nothing and is not read: its ~150 certificates parsed again
    /// cost 6 MiB of memory for as long as the gateway runs.
    public static func environmentCertificates(_ environment: [String: String], besidesSystemRoots: Bool = false) throws -> [NIOSSLCertificate] {
        var certificates: [NIOSSLCertificate] = []
        let skipped: (String) -> Bool = { besidesSystemRoots && isSystemStore($0) }
        if let file = environment["SSL_CERT_FILE"], !file.isEmpty, !skipped(file) {
            do {
                certificates += try Self.certificates(inFile: file)
            } catch let error as OutboundTLSError {
                throw OutboundTLSError("SSL_CERT_FILE: \(error)")
            }
        }
        if let directories = environment["SSL_CERT_DIR"], !directories.isEmpty {
            for directory in directories.split(separator: ":").map(String.init) where !skipped(directory) {
                certificates += directoryCertificates(directory)
            }
        }
        return unique(certificates)
    }

    // MARK: Private

    /// Where the system's trust store is, which `.default` roots read (the bundle files of the common
    /// distributions, and Debian's directory).
    private static let systemStores: Set<String> = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem",
        "/etc/ssl/cert.pem", "/etc/ssl/certs",
    ]

    /// Whether `path` (after its links are followed) is one of ``systemStores``.
    private static func isSystemStore(_ path: String) -> Bool {
        let standard = (path as NSString).standardizingPath
        let resolved = (standard as NSString).resolvingSymlinksInPath
        return systemStores.contains(standard) || systemStores.contains(resolved)
            || systemStores.contains { ($0 as NSString).resolvingSymlinksInPath == resolved }
    }

    /// The certificates of the PEM files of a directory; the hash links OpenSSL's `c_rehash` makes point at
    /// files already read, and are read once.
    private static func directoryCertificates(_ directory: String) -> [NIOSSLCertificate] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var seen: Set<String> = []
        var certificates: [NIOSSLCertificate] = []
        for name in names.sorted() {
            let path = (directory as NSString).appendingPathComponent(name)
            let resolved = (path as NSString).resolvingSymlinksInPath
            var isDirectory: ObjCBool = false
            guard seen.insert(resolved).inserted, FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            if let found = try? NIOSSLCertificate.fromPEMFile(resolved) { certificates += found }
        }
        return certificates
    }

    /// In order, each once.
    private static func unique(_ certificates: [NIOSSLCertificate]) -> [NIOSSLCertificate] {
        var seen: Set<NIOSSLCertificate> = []
        return certificates.filter { seen.insert($0).inserted }
    }
}
