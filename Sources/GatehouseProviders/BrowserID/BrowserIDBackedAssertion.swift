import Foundation
import GatehouseCore

/// A backed identity assertion: `<certificate>~<assertion>`, or the legacy base64url JSON bundle
/// `{"certificates":[…],"assertion":"…"}`. Exactly one certificate is accepted, as every BrowserID
/// verifier did; longer chains are refused with `unsupported_certificate_chain`.
struct BrowserIDBackedAssertion: Sendable {
    /// The size limit of a posted assertion (a DS256 or RS256 backed assertion is 2 to 4 KiB).
    static let maximumLength = 16 * 1024

    let certificate: BrowserIDJWS
    let assertion: BrowserIDJWS

    init(parsing text: String) throws(BrowserIDFailure) {
        let length = text.utf8.count
        guard length <= Self.maximumLength else {
            throw .tooLarge("the assertion is \(length) bytes; at most \(Self.maximumLength) are accepted")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .malformed("the assertion is empty") }

        let certificates: [Substring]
        let assertion: Substring
        if trimmed.contains("~") {
            let parts = trimmed.split(separator: "~", omittingEmptySubsequences: false)
            assertion = parts[parts.count - 1]
            certificates = Array(parts.dropLast())
            if assertion.isEmpty { throw .malformed("the backed assertion ends with '~' but has no assertion after it") }
            if certificates.contains(where: \.isEmpty) { throw .malformed("the backed assertion has an empty certificate") }
        } else {
            (certificates, assertion) = try Self.legacyBundle(trimmed)
        }
        guard !certificates.isEmpty else { throw .malformed("the backed assertion has no certificate") }
        guard certificates.count == 1 else {
            throw .unsupportedChain("the backed assertion has \(certificates.count) certificates; exactly one is accepted")
        }
        self.certificate = try BrowserIDJWS(parsing: certificates[0], role: "certificate")
        self.assertion = try BrowserIDJWS(parsing: assertion, role: "assertion")
    }

    /// The pre-2012 format: base64url of `{"certificates":[…],"assertion":"…"}`.
    private static func legacyBundle(_ text: String) throws(BrowserIDFailure) -> ([Substring], Substring) {
        guard let data = Base64URL.decode(text) else {
            throw .malformed("the assertion is neither '<certificate>~<assertion>' nor a base64url bundle")
        }
        guard let bundle = JSONValue.parse(data)?.objectValue else {
            throw .malformed("the base64url bundle is not a JSON object")
        }
        guard case .array(let items)? = bundle["certificates"] else {
            throw .malformed("the bundle has no 'certificates' list")
        }
        var certificates: [Substring] = []
        for item in items {
            guard let certificate = item.stringValueIfString, !certificate.isEmpty else {
                throw .malformed("the bundle's certificates must be non-empty strings")
            }
            certificates.append(Substring(certificate))
        }
        guard let assertion = bundle["assertion"]?.stringValueIfString, !assertion.isEmpty else {
            throw .malformed("the bundle has no 'assertion' string")
        }
        return (certificates, Substring(assertion))
    }
}
