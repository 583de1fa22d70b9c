public import Foundation

/// Reads one YAML mapping key by key and refuses keys nobody asked for.
///
/// Every accessor marks its key as known; ``finish()`` then reports the first unknown key with its line,
/// so typos never pass silently. Secrets may be given inline, as `"${ENV_VAR}"`, or as `<key>_file: path`.
///
/// ```swift
/// let map = try ConfigMap(node, section: "provider")
/// let url = try map.requiredString("token_endpoint")
/// try map.finish()
/// ```
public final class ConfigMap {
    public let node: ConfigNode
    /// Dotted path of this mapping inside its file (empty at the top), used in messages.
    public let section: String
    private let entries: [ConfigNode.Entry]
    private var known: Set<String> = []
    private let environment: [String: String]
    private let baseDirectory: String?

    /// - Parameters:
    ///   - node: must be a mapping (or null, read as an empty mapping).
    ///   - section: dotted path used in messages, e.g. `store`.
    ///   - environment: where `${VAR}` is looked up.
    ///   - baseDirectory: where relative `*_file` paths are resolved; the current directory when nil.
    public init(
        _ node: ConfigNode,
        section: String = "",
        environment: [String: String] = ProcessInfo.processInfo.environment,
        baseDirectory: String? = nil
    ) throws {
        self.node = node
        self.section = section
        self.environment = environment
        self.baseDirectory = baseDirectory
        switch node.value {
        case .mapping(let entries):
            self.entries = entries
            var seen: Set<String> = []
            for entry in entries where !seen.insert(entry.key).inserted {
                throw ConfigError(file: node.file, line: entry.line, message: "duplicate key '\(qualified(entry.key))'")
            }
        case .null:
            self.entries = []
        default:
            throw ConfigError(at: node, "'\(section.isEmpty ? "document" : section)' must be a mapping")
        }
    }

    /// The file this mapping came from.
    public var file: String { node.file }

    /// The full dotted name of a key, for messages.
    public func qualified(_ key: String) -> String { section.isEmpty ? key : "\(section).\(key)" }

    /// Whether the key is written (after marking it known).
    public func contains(_ key: String) -> Bool {
        known.insert(key)
        return entries.contains { $0.key == key }
    }

    /// The raw node of a key, marking it known.
    public func node(_ key: String) -> ConfigNode? {
        known.insert(key)
        guard let entry = entries.first(where: { $0.key == key }) else { return nil }
        if case .null = entry.value.value { return nil }
        return entry.value
    }

    /// An error located at a key (or at the mapping when the key is absent).
    public func error(_ key: String, _ message: String) -> ConfigError {
        let line = entries.first(where: { $0.key == key })?.line ?? node.line
        return ConfigError(file: node.file, line: line, message: message)
    }

    // MARK: Scalars

    /// A string. An unquoted value YAML reads as a number or a boolean (`client_id: 42`) is refused with the
    /// quoted spelling to use.
    public func string(_ key: String) throws -> String? {
        if let value = node(key), let type = value.implicitType, case .scalar(let text) = value.value {
            throw ConfigError(at: value, "'\(qualified(key))' must be a string, and \(text) is \(type.rawValue): write it quoted, \"\(text)\"")
        }
        return try scalar(key, expected: "a string")
    }

    /// A single value; a list or mapping is refused with what was expected (`a whole number`, …).
    private func scalar(_ key: String, expected: String) throws -> String? {
        guard let value = node(key) else { return nil }
        guard case .scalar(let text) = value.value else {
            throw ConfigError(at: value, "'\(qualified(key))' must be \(expected)")
        }
        return try expand(text, at: value, key: key)
    }

    public func requiredString(_ key: String) throws -> String {
        guard let value = try string(key), !value.isEmpty else { throw missing(key) }
        return value
    }

    /// "'x' is required", and when a key nobody asked for is a near miss of it, where that one is written.
    private func missing(_ key: String) -> ConfigError {
        let unasked = entries.filter { !known.contains($0.key) }
        if let near = KeySuggestion.closest(to: key, among: unasked.map(\.key)), let entry = unasked.first(where: { $0.key == near }) {
            return ConfigError(
                file: node.file, line: entry.line, message: "'\(qualified(key))' is required; '\(qualified(near))' is not a known key: did you mean '\(key)'?")
        }
        return error(key, "'\(qualified(key))' is required")
    }

    public func int(_ key: String, range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let text = try scalar(key, expected: "a whole number") else { return nil }
        guard let value = Int(text) else {
            throw error(key, "'\(qualified(key))' must be a whole number, not '\(text)'")
        }
        if let range, !range.contains(value) {
            throw error(key, "'\(qualified(key))' must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
        }
        return value
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let text = try scalar(key, expected: "true or false") else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(key, "'\(qualified(key))' must be true or false, not '\(text)'")
        }
    }

    /// A string that must be one of `allowed`.
    public func choice(_ key: String, _ allowed: [String]) throws -> String? {
        guard let text = try scalar(key, expected: "one of \(allowed.joined(separator: ", "))") else { return nil }
        guard allowed.contains(text) else {
            throw error(key, "'\(qualified(key))' must be one of \(allowed.joined(separator: ", ")), not '\(text)'")
        }
        return text
    }

    /// An absolute `http` or `https` URL.
    public func url(_ key: String) throws -> String? {
        guard let text = try scalar(key, expected: "an absolute http(s) URL") else { return nil }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", components.host?.isEmpty == false
        else {
            throw error(key, "'\(qualified(key))' must be an absolute http(s) URL, not '\(text)'")
        }
        return text
    }

    public func requiredURL(_ key: String) throws -> String {
        guard let value = try url(key) else { throw missing(key) }
        return value
    }

    /// A list of strings; a single string is read as a one-element list.
    public func strings(_ key: String) throws -> [String]? {
        guard let value = node(key) else { return nil }
        switch value.value {
        case .scalar(let text): return [try expand(text, at: value, key: key)]
        case .sequence(let items):
            return try items.map { item in
                guard case .scalar(let text) = item.value else {
                    throw ConfigError(at: item, "'\(qualified(key))' must be a list of strings")
                }
                return try expand(text, at: item, key: key)
            }
        default:
            throw ConfigError(at: value, "'\(qualified(key))' must be a list of strings")
        }
    }

    /// A secret: `key: value`, `key: "${ENV}"` or `key_file: path`. Never echoed in messages.
    public func secret(_ key: String) throws -> String? {
        let fileKey = key + "_file"
        let inline = try string(key)
        let path = try string(fileKey)
        if inline != nil && path != nil {
            throw error(fileKey, "give either '\(qualified(key))' or '\(qualified(fileKey))', not both")
        }
        if let inline { return inline }
        guard let path else { return nil }
        return try readFile(path, key: fileKey)
    }

    /// Reads a file named by a key, relative to the configuration's directory.
    public func readFile(_ path: String, key: String) throws -> String {
        let resolved = resolve(path)
        guard let data = FileManager.default.contents(atPath: resolved),
            var text = String(data: data, encoding: .utf8)
        else {
            throw error(key, "'\(qualified(key))': cannot read file '\(path)'")
        }
        // "\r\n" is one Character in Swift, so compare whole characters.
        while let last = text.last, last == "\n" || last == "\r\n" || last == "\r" { text.removeLast() }
        return text
    }

    /// A path made absolute against the configuration's directory.
    public func resolve(_ path: String) -> String {
        guard !path.hasPrefix("/"), let baseDirectory else { return path }
        return (baseDirectory as NSString).appendingPathComponent(path)
    }

    // MARK: Nested

    public func map(_ key: String) throws -> ConfigMap? {
        guard let value = node(key) else { return nil }
        return try ConfigMap(value, section: qualified(key), environment: environment, baseDirectory: baseDirectory)
    }

    /// A nested mapping, or an empty one when absent, so defaults apply.
    public func mapOrEmpty(_ key: String) throws -> ConfigMap {
        if let map = try map(key) { return map }
        return try ConfigMap(
            ConfigNode(.mapping([]), file: node.file, line: node.line), section: qualified(key),
            environment: environment, baseDirectory: baseDirectory)
    }

    public func maps(_ key: String) throws -> [ConfigMap] {
        guard let value = node(key) else { return [] }
        guard case .sequence(let items) = value.value else {
            throw ConfigError(at: value, "'\(qualified(key))' must be a list")
        }
        return try items.enumerated().map { index, item in
            try ConfigMap(item, section: "\(qualified(key))[\(index)]", environment: environment, baseDirectory: baseDirectory)
        }
    }

    /// Refuses every key no accessor asked for, each with the known key it most likely meant.
    public func finish() throws {
        let unknown = entries.filter { !known.contains($0.key) }.map { entry in
            var message = "unknown key '\(qualified(entry.key))'"
            if let near = KeySuggestion.closest(to: entry.key, among: known) { message += ": did you mean '\(qualified(near))'?" }
            return ConfigError(file: node.file, line: entry.line, message: message)
        }
        switch unknown.count {
        case 0: return
        case 1: throw unknown[0]
        default: throw ConfigErrorList(unknown)
        }
    }

    // MARK: Private

    /// Replaces `${VAR}` with the environment's value; an unset variable is an error.
    private func expand(_ text: String, at node: ConfigNode, key: String) throws -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ConfigError(at: node, "'\(qualified(key))': unterminated '${'")
            }
            let name = String(rest[start.upperBound..<end])
            guard let value = environment[name] else {
                throw ConfigError(
                    file: node.file, line: node.line, message: "'\(qualified(key))': environment variable \(name) is not set", unsetVariable: name)
            }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
