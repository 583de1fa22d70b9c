import Foundation
import GatehouseCore

/// The query strings of the client: the authorization URL it builds and the loopback callback it reads.
enum ClientEncoding {
    /// `name=value&…`, each side percent-encoded (everything but RFC 3986's unreserved characters).
    static func query(_ items: [(String, String)]) -> String {
        items.map { encoded($0.0) + "=" + encoded($0.1) }.joined(separator: "&")
    }

    /// One path segment or query component, percent-encoded.
    static func encoded(_ value: String) -> String {
        PercentEncoding.encode(value.utf8, keeping: PercentEncoding.isUnreserved)
    }

    /// The name-value pairs of a form-encoded query (Foundation's reading, `+` a space); the first of a
    /// repeated name wins. A query that is not valid gives none.
    static func queryParameters(_ query: Substring) -> [String: String] {
        let spaced = query.replacingOccurrences(of: "+", with: "%20")
        guard let items = URLComponents(string: "http://127.0.0.1/?" + spaced)?.queryItems else { return [:] }
        var parameters: [String: String] = [:]
        for item in items where parameters[item.name] == nil {
            parameters[item.name] = item.value ?? ""
        }
        return parameters
    }
}
