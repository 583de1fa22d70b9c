import Crypto
public import Foundation
public import GatehouseCore

/// A Simple Web Token (SWT) as ACS issues it: form-encoded pairs, `HMACSHA256` last.
///
/// Validation follows the SWT rules of docs/providers/acs.md: split on `&HMACSHA256=` (exactly two parts), HMAC-SHA256 over the
/// exact bytes before it with the base64-decoded key, constant-time compare of the decoded MAC, then
/// `ExpiresOn` (+ skew), `Audience`, `Issuer`. Duplicate names are refused.
public struct SimpleWebToken: Sendable, Equatable {
    /// Every pair except `HMACSHA256`, decoded, in order.
    public var pairs: [(name: String, value: String)]
    public var issuer: String
    public var audience: String
    public var expiresOn: Date

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.pairs.map(\.name) == rhs.pairs.map(\.name) && lhs.pairs.map(\.value) == rhs.pairs.map(\.value)
            && lhs.issuer == rhs.issuer && lhs.audience == rhs.audience && lhs.expiresOn == rhs.expiresOn
    }

    /// The claims other than the reserved `Issuer`, `Audience`, `ExpiresOn`.
    public var claims: [String: String] {
        var claims: [String: String] = [:]
        for pair in pairs where !["Issuer", "Audience", "ExpiresOn"].contains(pair.name) { claims[pair.name] = pair.value }
        return claims
    }

    static let signatureSeparator = "&HMACSHA256="
    static let maximumLength = 16_384

    /// Validates `text` and returns the token; throws ``ACSFailure`` with a stable code.
    public static func validate(
        _ text: String, key: Data, issuer expectedIssuer: String, audiences: [String], now: Date, clockSkew: TimeInterval
    ) throws(ACSFailure) -> SimpleWebToken {
        guard !text.isEmpty, text.utf8.count <= maximumLength else { throw .malformed("the token is empty or too long") }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .malformed("the token has characters outside printable ASCII") }
        let parts = text.components(separatedBy: signatureSeparator)
        guard parts.count >= 2 else {
            if text.hasPrefix("HMACSHA256=") { throw .malformed("the token has only a signature") }
            // Form pairs without a signature are an unsigned SWT; anything else is not an SWT at all.
            guard text.split(separator: "&", omittingEmptySubsequences: false).allSatisfy({ $0.contains("=") && !$0.hasPrefix("=") }) else {
                throw .malformed("the token is not an SWT (name=value pairs)")
            }
            throw .missingSignature("the token has no HMACSHA256 pair")
        }
        guard parts.count == 2 else { throw .malformed("the token has more than one HMACSHA256 pair") }
        let (signed, signatureText) = (parts[0], parts[1])
        guard !signed.isEmpty else { throw .malformed("nothing is signed") }
        guard !signatureText.isEmpty, !signatureText.contains("&"), !signatureText.contains("="),
            let signatureBase64 = percentDecode(signatureText, plusIsSpace: false),
            let signature = Data(base64Encoded: signatureBase64), signature.count == 32
        else { throw .malformed("HMACSHA256 is not the last pair or not a base64 HMAC-SHA256") }

        // Pairs: every one name=value, names unique, HMACSHA256 only once (the last).
        var pairs: [(name: String, value: String)] = []
        var seen = Set<String>()
        for piece in signed.split(separator: "&", omittingEmptySubsequences: false) {
            guard let equals = piece.firstIndex(of: "=") else { throw .malformed("a pair has no '='") }
            guard let name = percentDecode(String(piece[..<equals]), plusIsSpace: true),
                let value = percentDecode(String(piece[piece.index(after: equals)...]), plusIsSpace: true), !name.isEmpty
            else { throw .malformed("a pair is not form-encoded") }
            guard name != "HMACSHA256" else { throw .malformed("HMACSHA256 is not the last pair") }
            guard seen.insert(name).inserted else { throw .malformed("the name '\(name)' appears twice") }
            pairs.append((name, value))
        }

        let mac = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: key))
        guard ConstantTime.equal(Data(mac), signature) else { throw .invalidSignature("the HMACSHA256 signature does not verify") }

        let values = Dictionary(pairs.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        guard let expiresText = values["ExpiresOn"], let expires = Int64(expiresText), expires > 0 else {
            throw .malformed("ExpiresOn is missing or not Unix seconds")
        }
        guard let issuer = values["Issuer"] else { throw .malformed("Issuer is missing") }
        guard let audience = values["Audience"] else { throw .malformed("Audience is missing") }
        let expiresOn = Date(timeIntervalSince1970: TimeInterval(expires))
        guard now.timeIntervalSince(expiresOn) <= clockSkew else { throw .expired("the token expired at \(expires)") }
        guard audiences.contains(audience) else { throw .audienceMismatch("the token is for '\(audience)', not this realm") }
        guard issuer == expectedIssuer else { throw .issuerMismatch("the token was issued by '\(issuer)', not the configured issuer") }
        return SimpleWebToken(pairs: pairs, issuer: issuer, audience: audience, expiresOn: expiresOn)
    }

    /// Percent-decoding that refuses bad escapes; `+` is a space in pairs, kept in the signature.
    static func percentDecode(_ text: String, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            case UInt8(ascii: "+") where plusIsSpace: bytes.append(0x20)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Builds a signed token (stand-ins and tests); lowercase escapes like ACS.
    public static func sign(_ pairs: [(String, String)], key: Data) -> String {
        let signed = pairs.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
        let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: key)))
        return signed + signatureSeparator + encode(mac.base64EncodedString())
    }

    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16).leftPadded()
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
