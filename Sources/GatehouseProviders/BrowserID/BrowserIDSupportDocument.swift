import Foundation
import GatehouseCore

/// A parsed `/.well-known/browserid` document: an IdP with keys, a delegation, or a disabled domain.
enum BrowserIDSupportDocument: Sendable, Equatable {
    /// A primary IdP: its `public-key` and the `keys` entries meant for signing.
    case keys([BrowserIDPublicKey])
    /// `{"authority":"<host>"}`: another domain speaks for this one.
    case delegated(String)
    /// `{"disabled":true}`: the domain has opted out of BrowserID.
    case disabled

    /// Support documents are small; anything larger is refused.
    static let maximumLength = 64 * 1024

    /// - Parameter source: where it came from, for messages (`support document of example.com`).
    init(data: Data, source: String) throws(BrowserIDFailure) {
        guard data.count <= Self.maximumLength else { throw .untrustedIssuer("the \(source) is larger than 64 KiB") }
        guard let json = JSONValue.parse(data) else { throw .untrustedIssuer("the \(source) is not JSON") }
        try self.init(json: json, source: source)
    }

    init(json: JSONValue, source: String) throws(BrowserIDFailure) {
        guard let members = json.objectValue else { throw .untrustedIssuer("the \(source) is not a JSON object") }
        if case .bool(true)? = members["disabled"] {
            self = .disabled
            return
        }
        if let authority = members["authority"] {
            guard let text = authority.stringValueIfString, let domain = BrowserIDDomain.normalize(text) else {
                throw .untrustedIssuer("the \(source) has an invalid 'authority'")
            }
            self = .delegated(domain)
            return
        }
        var keys: [BrowserIDPublicKey] = []
        if let key = members["public-key"] {
            keys.append(try BrowserIDPublicKey(json: key, role: "the 'public-key' of the \(source)"))
        }
        if case .array(let entries)? = members["keys"] {
            for entry in entries {
                let use = entry["use"]?.stringValueIfString
                guard use == nil || use == "sig" else { continue }
                keys.append(try BrowserIDPublicKey(json: entry, role: "a key of the \(source)"))
            }
        }
        guard !keys.isEmpty else { throw .untrustedIssuer("the \(source) has no 'public-key', 'authority' or 'disabled'") }
        self = .keys(keys)
    }
}
