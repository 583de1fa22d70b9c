import Foundation
import GatehouseCore

/// Joins a client-supplied path onto an upstream base URL so that it can never leave the base path
/// or the base origin: dot segments are resolved first, and encoded slashes or dots are refused.
enum UpstreamPath {
    static func join(base: String, rawPath: String, query: String?) throws -> String {
        var segments: [Substring] = []
        for segment in rawPath.split(separator: "/", omittingEmptySubsequences: true) {
            let decoded = segment.removingPercentEncoding ?? String(segment)
            if decoded.contains("/") || decoded.contains("\\") {
                throw GatehouseError.invalidRequest("The path contains an encoded slash.")
            }
            switch decoded {
            case ".": continue
            case "..":
                guard !segments.isEmpty else { throw GatehouseError.invalidRequest("The path leaves the upstream's base path.") }
                segments.removeLast()
            default:
                segments.append(segment)
            }
        }
        var url = base.hasSuffix("/") ? String(base.dropLast()) : base
        if !segments.isEmpty { url += "/" + segments.joined(separator: "/") }
        if rawPath.hasSuffix("/") && !segments.isEmpty { url += "/" }
        if let query, !query.isEmpty { url += "?" + query }
        return url
    }
}
