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

    /// Appends query parameters to a URL that may already have a query.
    public static func appending(_ fields: [(String, String)], to url: String) -> String {
        guard !fields.isEmpty else { return url }
        let separator = url.contains("?") ? "&" : "?"
        return url + separator + encode(fields)
    }
}
