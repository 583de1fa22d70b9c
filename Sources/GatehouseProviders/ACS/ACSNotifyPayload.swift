import Foundation
public import GatehouseCore

/// The string ACS hands to `window.external.Notify`: a JSON object with `appliesTo`, `context`,
/// `created`, `expires`, `securityToken` (HTML-escaped XML) and `tokenType` (docs/providers/acs.md).
public struct ACSNotifyPayload: Sendable, Equatable {
    public var appliesTo: String?
    public var tokenType: String?
    public var created: Int64?
    public var expires: Int64?
    /// The token inside `securityToken`: an SWT (`k=v&…`) or a compact JWT.
    public var token: String

    /// Parses the Notify JSON (with `JSONDecoder`, never regexes) and extracts the token.
    public init(json text: String) throws(ACSFailure) {
        guard let object = JSONValue.parse(Data(text.utf8))?.objectValue else { throw .malformed("the Notify payload is not a JSON object") }
        guard case .string(let securityToken)? = object["securityToken"], !securityToken.isEmpty else {
            throw .malformed("the Notify payload has no securityToken string")
        }
        appliesTo = object["appliesTo"]?.stringValue
        tokenType = object["tokenType"]?.stringValue
        created = object["created"]?.doubleValue.flatMap { Int64(exactly: $0.rounded(.down)) }
        expires = object["expires"]?.doubleValue.flatMap { Int64(exactly: $0.rounded(.down)) }
        token = try Self.token(fromSecurityToken: securityToken)
    }

    /// HTML-unescape → drop the prolog → parse XML → root text → base64-decode (UTF-8). A value that is
    /// not markup is taken as the token itself.
    public static func token(fromSecurityToken escaped: String) throws(ACSFailure) -> String {
        let xml = htmlUnescape(escaped).trimmingCharacters(in: .whitespacesAndNewlines)
        guard xml.hasPrefix("<") else { return xml }
        let root = try MiniXML.root(of: xml)
        let localName = root.name.split(separator: ":").last.map(String.init) ?? root.name
        guard localName == "BinarySecurityToken" else {
            throw .unsupported("a '\(localName)' token is not supported (SWT or JWT in a BinarySecurityToken)")
        }
        let base64 = root.text.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: base64), let token = String(data: data, encoding: .utf8), !token.isEmpty else {
            throw .malformed("the BinarySecurityToken is not base64 text")
        }
        return token
    }

    /// `&lt; &gt; &quot; &apos; &amp;` and numeric references.
    public static func htmlUnescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "&", let semicolon = text[index...].prefix(12).firstIndex(of: ";") {
                let entity = text[text.index(after: index)..<semicolon]
                if let replacement = entityValue(entity) {
                    out += replacement
                    index = text.index(after: semicolon)
                    continue
                }
            }
            out.append(character)
            index = text.index(after: index)
        }
        return out
    }

    static func entityValue(_ entity: Substring) -> String? {
        switch entity {
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "amp": return "&"
        default:
            var number: UInt32?
            if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                number = UInt32(entity.dropFirst(2), radix: 16)
            } else if entity.hasPrefix("#") {
                number = UInt32(entity.dropFirst(), radix: 10)
            }
            return number.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
        }
    }
}

/// Just enough XML for a one-element token document: optional prolog and comments, one root
/// element with attributes and text content only, nothing after it.
enum MiniXML {
    struct Element {
        var name: String
        var text: String
    }

    static func root(of document: String) throws(ACSFailure) -> Element {
        var rest = Substring(document)
        func skipMisc() throws(ACSFailure) {
            while true {
                rest = rest.drop(while: \.isWhitespace)
                if rest.hasPrefix("<?") {
                    guard let end = rest.range(of: "?>") else { throw .malformed("the XML prolog is not closed") }
                    rest = rest[end.upperBound...]
                } else if rest.hasPrefix("<!--") {
                    guard let end = rest.range(of: "-->") else { throw .malformed("an XML comment is not closed") }
                    rest = rest[end.upperBound...]
                } else {
                    return
                }
            }
        }
        try skipMisc()
        guard rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") else { throw .malformed("the securityToken is not an XML element") }
        let tag = rest[rest.index(after: rest.startIndex)..<close]
        let name = String(tag.prefix { !$0.isWhitespace && $0 != "/" })
        guard !name.isEmpty, !name.hasPrefix("!") else { throw .malformed("the securityToken has no root element") }
        rest = rest[rest.index(after: close)...]
        if tag.hasSuffix("/") { throw .malformed("the token element is empty") }
        guard let endTag = rest.range(of: "</\(name)") else { throw .malformed("the root element '\(name)' is not closed") }
        let content = rest[..<endTag.lowerBound]
        guard !content.contains("<") else { throw .malformed("the token element has child elements") }
        rest = rest[endTag.upperBound...].drop(while: \.isWhitespace)
        guard rest.hasPrefix(">") else { throw .malformed("the end tag is broken") }
        rest = rest.dropFirst()
        try skipMisc()
        guard rest.isEmpty else { throw .malformed("there is content after the root element") }
        return Element(name: name, text: ACSNotifyPayload.htmlUnescape(String(content)))
    }
}
