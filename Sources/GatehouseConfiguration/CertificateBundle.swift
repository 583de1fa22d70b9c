public import Foundation
import SwiftASN1
import X509

/// A PEM file of certificate authorities to trust (`outbound_tls.ca_files`, a `tls.ca_file`), read and checked:
/// what `gatehouse check`, start-up and a SIGHUP reload refuse before anything is trusted.
///
/// ```swift
/// let bundle = try CertificateBundle.load(file: "/etc/gatehouse/ca/corp-root.pem")
/// print(bundle.count)
/// ```
public struct CertificateBundle: Sendable, Equatable {
    /// Certificates in the file.
    public let count: Int
    /// The earliest `notAfter` of them.
    public let firstExpiry: Date

    /// What is wrong with a bundle; each names the file.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file cannot be read.
        case unreadable(String)
        /// It holds no PEM certificate.
        case noCertificate(String)
        /// A certificate in it does not parse.
        case unparsable(String)
        /// A certificate in it has expired.
        case expired(file: String, subject: String, date: Date)

        public var description: String {
            switch self {
            case .unreadable(let file): "cannot read the certificate file '\(file)'"
            case .noCertificate(let file): "'\(file)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
            case .unparsable(let file): "'\(file)' holds a certificate that cannot be parsed"
            case .expired(let file, let subject, let date):
                "'\(file)': the certificate \(subject) expired on \(TLSCertificatePair.format(date))"
            }
        }
    }

    /// Reads and checks a bundle: readable, at least one PEM certificate, each parses and none has expired.
    /// - Parameters:
    ///   - file: the PEM file.
    ///   - now: an expired certificate is refused against this time.
    /// - Throws: ``Problem``.
    public static func load(file: String, now: Date = Date()) throws(Problem) -> CertificateBundle {
        guard let text = TLSCertificatePair.readText(file) else { throw .unreadable(file) }
        let blocks = TLSCertificatePair.blocks(in: text).filter { $0.label == "CERTIFICATE" }
        guard !blocks.isEmpty else { throw .noCertificate(file) }
        var firstExpiry = Date.distantFuture
        for block in blocks {
            let certificate: Certificate
            do {
                certificate = try Certificate(pemEncoded: block.text)
            } catch {
                throw .unparsable(file)
            }
            if certificate.notValidAfter <= now {
                throw .expired(file: file, subject: "'\(certificate.subject)'", date: certificate.notValidAfter)
            }
            firstExpiry = min(firstExpiry, certificate.notValidAfter)
        }
        return CertificateBundle(count: blocks.count, firstExpiry: firstExpiry)
    }
}
