/// Domain names as BrowserID uses them: issuers, `authority` targets, principal domains (`host[:port]`).
enum BrowserIDDomain {
    /// A lower-cased `host` or `host:port`; nil for anything that could change the support-document URL
    /// (slashes, `@`, `?`, spaces, an empty label, …).
    static func normalize(_ text: String) -> String? {
        let lowered = text.lowercased()
        guard !lowered.isEmpty, lowered.utf8.count <= 260 else { return nil }
        let parts = lowered.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        if parts.count == 2 {
            guard let port = Int(parts[1]), (1...65535).contains(port), parts[1].allSatisfy(\.isASCII) else { return nil }
        }
        let labels = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty, label.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            else { return nil }
        }
        return lowered
    }

    /// The domain of an email address (`local@host[:port]`), as PyBrowserID's `VALID_EMAIL` reads it.
    static func ofEmail(_ email: String) -> String? {
        guard let at = email.lastIndex(of: "@") else { return nil }
        let local = email[..<at]
        let allowedLocal = Set("!#$%&'*+/=?^`{|}~.-_")
        guard !local.isEmpty, local.count <= 64,
            local.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || allowedLocal.contains($0) })
        else { return nil }
        return normalize(String(email[email.index(after: at)...]))
    }
}
