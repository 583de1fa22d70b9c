import Foundation
import GatehouseCore

extension ConfigMap {
    /// A whole number greater than zero (`unit` names it in the message: seconds, bytes, …).
    func positiveInt(_ key: String, unit: String) throws -> Int? {
        guard let value = try int(key) else { return nil }
        guard value > 0 else {
            try report(key, "'\(qualified(key))' must be a positive number of \(unit), not \(value)")
            return nil
        }
        return value
    }

    /// A whole number of zero or more.
    func nonNegativeInt(_ key: String, unit: String) throws -> Int? {
        guard let value = try int(key) else { return nil }
        guard value >= 0 else {
            try report(key, "'\(qualified(key))' must be zero or a positive number of \(unit), not \(value)")
            return nil
        }
        return value
    }

    /// A string that, when written, must not be empty.
    func nonEmptyString(_ key: String) throws -> String? {
        guard let value = try string(key) else { return nil }
        guard !value.isEmpty else {
            try report(key, "'\(qualified(key))' must not be empty")
            return nil
        }
        return value
    }

    /// An absolute http(s) URL without trailing slash, query or fragment.
    func baseURL(_ key: String) throws -> String? {
        guard var value = try url(key) else { return nil }
        if let components = URLComponents(string: value), components.query != nil || components.fragment != nil {
            try report(key, "'\(qualified(key))' must not have a query or fragment, not '\(value)'")
            return nil
        }
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }

    /// A list of host patterns (`app.example.com`, `*.example.com`), every bad entry in one problem; `nil` when
    /// the key is not written. `empty` ends the problem of an empty list.
    func hostPatterns(_ key: String, empty: String) throws -> [HostPattern]? {
        guard let listed = try strings(key) else { return nil }
        // One problem for all the bad entries: a key has one problem.
        let bad = listed.filter { HostPattern($0) == nil }
        if !bad.isEmpty {
            let entries = bad.map { "'\($0)'" }.joined(separator: ", ")
            try report(
                key,
                "'\(qualified(key))' \(bad.count == 1 ? "entry" : "entries") \(entries) must be a host name like app.example.com, or *.example.com ('*' only as the whole first label), without port"
            )
        }
        if listed.isEmpty { try report(key, "'\(qualified(key))' must list at least one host (\(empty))") }
        return listed.compactMap(HostPattern.init)
    }

    /// A list of strings with the node of each entry, where a problem with it is placed (its line in the file, or
    /// the environment variable that gave the list).
    func locatedStrings(_ key: String) throws -> [(value: String, node: ConfigNode)]? {
        guard let values = try strings(key), let node = node(key) else { return nil }
        let nodes: [ConfigNode]
        if case .sequence(let items) = node.value {
            nodes = items
        } else {
            nodes = [node]
        }
        return zip(values, nodes).map { (value: $0, node: $1) }
    }

    /// Client redirect URIs: absolute URIs with a scheme and no fragment (RFC 6749 §3.1.2), compared exactly later.
    /// The first wrong entry is the problem (collecting, the valid entries are answered).
    func redirectURIs(_ key: String) throws -> [String] {
        guard let entries = try locatedStrings(key) else { return [] }
        var valid: [String] = []
        for entry in entries {
            let components = URLComponents(string: entry.value)
            guard let components, let scheme = components.scheme, !scheme.isEmpty, components.fragment == nil else {
                try report(
                    ConfigError(at: entry.node, "'\(qualified(key))' entry '\(entry.value)' must be an absolute URI without a fragment"),
                    key: key)
                continue
            }
            valid.append(entry.value)
        }
        return valid
    }
}
