public import Foundation
import SwiftASN1
import X509

/// The certificate chain and private key of `tls:`, read from their PEM files and checked against each
/// other: what start-up, `gatehouse check` and a SIGHUP reload all read, so the three agree.
///
/// ```swift
/// let pair = try TLSCertificatePair.load(certificateFile: "fullchain.pem", privateKeyFile: "privkey.pem")
/// print(pair.notValidAfter)
/// ```
public struct TLSCertificatePair: Sendable, Equatable {
    /// The chain file's PEM text, leaf first.
    public let certificatePEM: String
    /// The key file's PEM text: a secret, never logged.
    public let privateKeyPEM: String
    /// Certificates in the chain (the leaf included).
    public let chainLength: Int
    /// The leaf's `notAfter`.
    public let notValidAfter: Date

    /// What is wrong with a pair; each names the file it is about and never a key's content.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The chain file cannot be read, or holds no PEM certificate that parses.
        case certificate(String)
        /// The key file cannot be read, or holds no PEM private key that parses.
        case privateKey(String)
        /// The key is not the leaf's.
        case mismatch
        /// The leaf's `notAfter` is in the past.
        case expired(Date)

        /// Whether it is about the key file (else the certificate file): where a configuration reports it.
        public var isAboutKey: Bool {
            switch self {
            case .privateKey, .mismatch: true
            case .certificate, .expired: false
            }
        }

        public var description: String {
            switch self {
            case .certificate(let reason), .privateKey(let reason): reason
            case .mismatch: "the private key does not match the certificate (the first one of the chain)"
            case .expired(let date): "the certificate expired on \(TLSCertificatePair.format(date))"
            }
        }
    }

    /// Reads and checks a pair.
    /// - Parameters:
    ///   - certificateFile: PEM chain, leaf first.
    ///   - privateKeyFile: PEM private key (PKCS#8, SEC1 EC or PKCS#1 RSA).
    ///   - now: an expired leaf is refused against this time.
    /// - Throws: ``Problem``.
    public static func load(certificateFile: String, privateKeyFile: String, now: Date = Date()) throws(Problem) -> TLSCertificatePair {
        guard let chainText = readText(certificateFile) else {
            throw .certificate("cannot read the certificate file '\(certificateFile)'")
        }
        let certificates = blocks(in: chainText).filter { $0.label == "CERTIFICATE" }
        guard let leafBlock = certificates.first else {
            throw .certificate("'\(certificateFile)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        let leaf: Certificate
        do {
            leaf = try Certificate(pemEncoded: leafBlock.text)
            for other in certificates.dropFirst() { _ = try Certificate(pemEncoded: other.text) }
        } catch {
            throw .certificate("'\(certificateFile)' holds a certificate that cannot be parsed")
        }
        guard let keyText = readText(privateKeyFile) else {
            throw .privateKey("cannot read the private key file '\(privateKeyFile)'")
        }
        guard let keyBlock = blocks(in: keyText).first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
            throw .privateKey("'\(privateKeyFile)' holds no PEM private key (-----BEGIN PRIVATE KEY-----)")
        }
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemEncoded: keyBlock.text)
        } catch {
            // The error's text could quote the key's bytes: not repeated.
            throw .privateKey("'\(privateKeyFile)' holds a private key that cannot be parsed (PKCS#8, EC P-256/P-384 or RSA)")
        }
        guard key.publicKey == leaf.publicKey else { throw .mismatch }
        guard leaf.notValidAfter > now else { throw .expired(leaf.notValidAfter) }
        return TLSCertificatePair(
            certificatePEM: chainText, privateKeyPEM: keyText, chainLength: certificates.count, notValidAfter: leaf.notValidAfter)
    }

    /// A date as `2026-11-26 19:52:52 UTC`, for messages.
    public static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) UTC"
    }

    // MARK: Shared with CertificateBundle

    static func readText(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// The PEM blocks of a file, in order, each with its label (`CERTIFICATE`, `PRIVATE KEY`, …); text outside
    /// the blocks (OpenSSL's `Bag Attributes`, `EC PARAMETERS` before the key) is skipped.
    static func blocks(in text: String) -> [(label: String, text: String)] {
        var found: [(label: String, text: String)] = []
        var label: String?
        var lines: [Substring] = []
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if label == nil, trimmed.hasPrefix("-----BEGIN "), trimmed.hasSuffix("-----") {
                label = String(trimmed.dropFirst("-----BEGIN ".count).dropLast(5))
                lines = [Substring(trimmed)]
            } else if let current = label {
                lines.append(Substring(trimmed))
                if trimmed == "-----END \(current)-----" {
                    found.append((current, lines.joined(separator: "\n")))
                    label = nil
                }
            }
        }
        return found
    }
}
