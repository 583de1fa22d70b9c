import Crypto
import Foundation
import GatehouseCore

/// SPiD's API envelope ("SPP Container"): `data` carries the payload, `error` a failure; signed
/// responses carry `data` as base64url JSON with `sig` = HMAC-SHA256 over it.
struct SPPContainer: Sendable {
    let document: JSONValue

    init?(_ body: Data) {
        guard let document = JSONValue.parse(body), document.objectValue != nil else { return nil }
        self.document = document
    }

    /// The payload, or nil when the body is no envelope.
    var data: JSONValue? { document["data"] }

    /// `(code, description)` of a failure in any of SPiD's shapes: the envelope's `error` object, or a
    /// top-level OAuth error (`error`, `error_code`, `error_description`).
    var failure: (code: String, description: String)? {
        switch document["error"] {
        case .object(let members)?:
            let code = members["type"]?.stringValue ?? members["code"]?.stringValue ?? "provider_error"
            return (code, members["description"]?.stringValue ?? "SPiD reported an error.")
        case .string(let code)?:
            return (code, document["error_description"]?.stringValue ?? "SPiD reported an error.")
        default:
            return nil
        }
    }

    /// Verifies a signed response: `sig` = base64url(HMAC-SHA256(secret, data as received)), then decodes `data`.
    static func verifiedData(data: String, signature: String, secret: String) -> JSONValue? {
        guard let expected = Base64URL.decode(signature) else { return nil }
        let mac = HMAC<SHA256>.authenticationCode(for: Data(data.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        guard ConstantTime.equal(Data(mac), expected), let payload = Base64URL.decode(data) else { return nil }
        return JSONValue.parse(payload)
    }
}
