import Foundation
import HTTPTypes

/// Headers that belong to one connection (RFC 9110 §7.6.1) and never cross the proxy.
enum HopByHopHeaders {
    static let names: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
        "te", "trailer", "transfer-encoding", "upgrade",
    ]

    /// Hop-by-hop names plus those the `Connection` header lists.
    static func names(in fields: HTTPFields) -> Set<String> {
        var result = names
        for value in fields[values: .connection] {
            for token in value.split(separator: ",") {
                result.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return result
    }
}
