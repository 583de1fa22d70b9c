import Foundation
import GatehouseCore

/// Keeps a proxied login page under the gateway: links, forms and `Location` pointing at an allowed
/// origin, and root-relative ones, go to `/v1/pages/{login}/{origin index}/…`; a provider's page script
/// (``PageScriptCapturing``) goes in before the page's first script.
struct LoginPageRewriter {
    /// `/v1/pages/{login id}`.
    let prefix: String
    let origins: [String]

    func proxied(origin index: Int) -> String { "\(prefix)/\(index)" }

    /// A `Location` value resolved against `base`; nil when it leaves the allowed origins.
    func location(_ value: String, base: String) -> String? {
        guard let url = URL(string: value, relativeTo: URL(string: base))?.absoluteURL,
            let origin = WebOrigin.of(url.absoluteString), let index = origins.firstIndex(of: origin)
        else { return nil }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        let path = components?.percentEncodedPath ?? "/"
        let query = components?.percentEncodedQuery.map { "?\($0)" } ?? ""
        components = nil
        return proxied(origin: index) + (path.isEmpty ? "/" : path) + query
    }

    /// Rewrites absolute URLs of the allowed origins and root-relative attribute values.
    func html(_ page: String, currentOrigin index: Int) -> String {
        var page = page
        for (originIndex, origin) in origins.enumerated() {
            page = page.replacingOccurrences(of: origin + "/", with: proxied(origin: originIndex) + "/")
            for quote in ["\"", "'"] {
                page = page.replacingOccurrences(of: origin + quote, with: proxied(origin: originIndex) + "/" + quote)
            }
        }
        for attribute in ["href", "action", "src"] {
            for quote in ["\"", "'"] {
                for spacing in ["=", " = "] {
                    let needle = "\(attribute)\(spacing)\(quote)/"
                    var result = ""
                    var rest = Substring(page)
                    while let range = rest.range(of: needle, options: .caseInsensitive) {
                        result += rest[..<range.upperBound]
                        rest = rest[range.upperBound...]
                        // `//host` is protocol-relative; the gateway prefix is already rewritten.
                        if !rest.hasPrefix("/") && !rest.hasPrefix(prefix.dropFirst()) {
                            result += proxied(origin: index).dropFirst() + "/"
                        }
                    }
                    page = result + rest
                }
            }
        }
        return page
    }

    /// Inserts `script` before the page's first `<script`, or right after `<head…>`, whichever is first.
    static func inject(_ script: String, into page: String) -> String {
        let firstScript = page.range(of: "<script", options: .caseInsensitive)?.lowerBound
        var headEnd: String.Index?
        if let head = page.range(of: "<head", options: .caseInsensitive), let close = page[head.upperBound...].firstIndex(of: ">") {
            headEnd = page.index(after: close)
        }
        let candidates = [firstScript, headEnd].compactMap { $0 }
        if let position = candidates.min() {
            var copy = page
            copy.insert(contentsOf: script, at: position)
            return copy
        }
        if let html = page.range(of: "<html", options: .caseInsensitive), let close = page[html.upperBound...].firstIndex(of: ">") {
            var copy = page
            copy.insert(contentsOf: script, at: page.index(after: close))
            return copy
        }
        return script + page
    }
}
