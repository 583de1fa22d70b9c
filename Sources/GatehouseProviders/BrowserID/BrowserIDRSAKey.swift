import BigInt
import Crypto
import Foundation
import _CryptoExtras

/// An RSA public key of a BrowserID certificate or support document.
///
/// Every `RS*` label is verified as RSA PKCS#1 v1.5 with SHA-256 (the labels' key sizes differ between
/// implementations, docs/providers/browserid.md), with swift-crypto's BoringSSL-backed verifier. Moduli below 1024 bits
/// (the "testing only" RS64 keys of 512 bits) are refused: swift-crypto will not load them, and they can
/// be factored.
struct BrowserIDRSAKey: Sendable, Equatable {
    static let minimumModulusBits = 1024
    static let maximumModulusBits = 8192

    let n: BigUInt
    let e: BigUInt

    init(n: BigUInt, e: BigUInt, role: String) throws(BrowserIDFailure) {
        guard n.bitWidth >= Self.minimumModulusBits else {
            throw .unsupportedAlgorithm("\(role) is a \(n.bitWidth)-bit RSA key; at least \(Self.minimumModulusBits) bits are required")
        }
        guard n.bitWidth <= Self.maximumModulusBits else {
            throw .unsupportedAlgorithm("\(role) is a \(n.bitWidth)-bit RSA key; at most \(Self.maximumModulusBits) bits are accepted")
        }
        guard e >= 3, e.words[0] & 1 == 1, e < n else { throw .malformed("\(role) has an invalid RSA exponent") }
        self.n = n
        self.e = e
    }

    var modulusByteCount: Int { (n.bitWidth + 7) / 8 }

    /// PKCS#1 v1.5 + SHA-256. A signature shorter than the modulus (some signers drop leading zero bytes)
    /// is left-padded; a longer one is invalid.
    func isValidSignature(_ signature: Data, for message: Data) throws(BrowserIDFailure) -> Bool {
        guard signature.count <= modulusByteCount else { return false }
        let padded = Data(repeating: 0, count: modulusByteCount - signature.count) + signature
        let key: _RSA.Signing.PublicKey
        do {
            key = try _RSA.Signing.PublicKey(unsafeDERRepresentation: pkcs1DER)
        } catch {
            throw .unsupportedAlgorithm("the RSA key could not be loaded (\(n.bitWidth) bits)")
        }
        return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: padded), for: message, padding: .insecurePKCS1v1_5)
    }

    /// `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }` (RFC 8017 A.1.1), DER.
    var pkcs1DER: Data {
        DER.sequence(DER.integer(n) + DER.integer(e))
    }

    /// The few DER encodings an RSA public key needs.
    private enum DER {
        static func length(_ count: Int) -> Data {
            if count < 0x80 { return Data([UInt8(count)]) }
            var bytes: [UInt8] = []
            var rest = count
            while rest > 0 {
                bytes.insert(UInt8(rest & 0xff), at: 0)
                rest >>= 8
            }
            return Data([0x80 | UInt8(bytes.count)] + bytes)
        }

        static func integer(_ value: BigUInt) -> Data {
            var content = value.serialize()
            if content.isEmpty { content = Data([0]) }
            if content[content.startIndex] & 0x80 != 0 { content.insert(0, at: content.startIndex) }
            return Data([0x02]) + length(content.count) + content
        }

        static func sequence(_ content: Data) -> Data {
            Data([0x30]) + length(content.count) + content
        }
    }
}
