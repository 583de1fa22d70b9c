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
        names(listedIn: fields[values: .connection])
    }

    /// Hop-by-hop names plus those listed in the given `Connection` header values (any header type).
    static func names(listedIn connectionValues: some Sequence<String>) -> Set<String> {
        var result = names
        for value in connectionValues {
            for token in value.split(separator: ",") {
                result.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return result
    }
}
