import Foundation
import GatehouseCore

/// One compact JWS of a backed assertion (a certificate or the assertion itself), parsed but not verified.
///
/// `b64url(header).b64url(payload).b64url(signature)`, unpadded base64url; the header names the
/// algorithm (`RS256`, `DS128`, …); the signed bytes are the ASCII of the first two parts as received.
struct BrowserIDJWS: Sendable {
    /// The header's `alg`.
    let algorithm: String
    let payload: [String: JSONValue]
    let signature: Data
    /// `header.payload` as received.
    let signingInput: Data

    /// - Parameter role: `certificate` or `assertion`, used in messages.
    init(parsing text: Substring, role: String) throws(BrowserIDFailure) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .malformed("the \(role) is not a JWS of three parts separated by '.' (found \(parts.count))")
        }
        for (index, name) in ["header", "payload", "signature"].enumerated() where parts[index].isEmpty {
            throw .malformed("the \(role)'s \(name) is empty")
        }
        guard let headerData = Base64URL.decode(String(parts[0])) else {
            throw .malformed("the \(role)'s header is not unpadded base64url")
        }
        guard let header = JSONValue.parse(headerData)?.objectValue else {
            throw .malformed("the \(role)'s header is not a JSON object")
        }
        guard let algorithm = header["alg"]?.stringValueIfString, !algorithm.isEmpty else {
            throw .malformed("the \(role)'s header has no string 'alg'")
        }
        if header["crit"] != nil {
            // RFC 7515 §4.1.11: critical extensions we do not understand must be refused.
            throw .malformed("the \(role)'s header names critical extensions ('crit'), which BrowserID does not use")
        }
        guard let payloadData = Base64URL.decode(String(parts[1])) else {
            throw .malformed("the \(role)'s payload is not unpadded base64url")
        }
        guard let payload = JSONValue.parse(payloadData)?.objectValue else {
            throw .malformed("the \(role)'s payload is not a JSON object")
        }
        guard let signature = Base64URL.decode(String(parts[2])), !signature.isEmpty else {
            throw .malformed("the \(role)'s signature is not unpadded base64url")
        }
        self.algorithm = algorithm
        self.payload = payload
        self.signature = signature
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    /// A millisecond time member (`exp`, `iat`, `nbf`); nil when absent, an error when not a number.
    func milliseconds(_ member: String, role: String) throws(BrowserIDFailure) -> Double? {
        guard let value = payload[member] else { return nil }
        guard case .number(let number) = value, number.isFinite else {
            throw .malformed("the \(role)'s '\(member)' is not a number of milliseconds")
        }
        return number
    }
}

extension JSONValue {
    /// The string, only when it is a JSON string (no number-to-text conversion).
    var stringValueIfString: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
