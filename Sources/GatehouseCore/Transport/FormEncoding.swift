import Foundation

/// `application/x-www-form-urlencoded` and query-string encoding.
public enum FormEncoding {
    /// The characters left as they are (RFC 3986 unreserved).
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Decodes `a=b&c=d` (also `+` as space); later duplicates are kept in order.
    public static func decode(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func unescape(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    /// Removes every query parameter with that name (compared after percent-decoding).
    public static func removing(_ name: String, from url: String) -> String {
        guard let mark = url.firstIndex(of: "?") else { return url }
        let kept = url[url.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: true).filter { pair in
            let key = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return (String(key).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(key)) != name
        }
        let base = String(url[..<mark])
        return kept.isEmpty ? base : base + "?" + kept.joined(separator: "&")
    }

    /// Appends query parameters to a URL that may already have a query.
    public static func appending(_ fields: [(String, String)], to url: String) -> String {
        guard !fields.isEmpty else { return url }
        let separator = url.contains("?") ? "&" : "?"
        return url + separator + encode(fields)
    }
}
