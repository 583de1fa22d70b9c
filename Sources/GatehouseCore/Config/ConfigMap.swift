public import Foundation

/// Reads one YAML mapping key by key and refuses keys nobody asked for.
///
/// Every accessor marks its key as known; ``finish()`` then reports the unknown keys with their lines, so typos
/// never pass silently. Secrets are never written in the file: `key: "${ENV_VAR}"` or `key_file: path`
/// (``secret(_:)``).
///
/// A map stops at its first problem and throws it, unless it was created with a ``ConfigProblems``: then it
/// *collects*. Every accessor that finds a problem records it there and answers `nil` (or a placeholder for
/// `required…`), ``report(_:_:after:)`` records the problems the caller finds itself, and ``finish()`` records
/// each unknown key, so one reading of a file finds all of its problems. Nested maps share their parent's
/// ``ConfigProblems``.
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
    /// Where problems are recorded when this map collects them; nil when it throws the first one.
    public let problems: ConfigProblems?
    private let entries: [ConfigNode.Entry]
    private var known: Set<String> = []
    private let environment: [String: String]
    private let baseDirectory: String?

    /// What ``requiredURL(_:)`` answers for a missing or wrong URL when the map collects problems.
    public static let placeholderURL = "https://placeholder.invalid"

    /// - Parameters:
    ///   - node: must be a mapping (or null, read as an empty mapping).
    ///   - section: dotted path used in messages, e.g. `store`.
    ///   - environment: where `${VAR}` is looked up.
    ///   - baseDirectory: where relative `*_file` paths are resolved; the current directory when nil.
    ///   - problems: when given, the map collects its problems there instead of throwing them.
    /// - Throws: ``ConfigError`` when `node` is not a mapping, or (when not collecting) has a duplicate key.
    public init(
        _ node: ConfigNode,
        section: String = "",
        environment: [String: String] = ProcessInfo.processInfo.environment,
        baseDirectory: String? = nil,
        problems: ConfigProblems? = nil
    ) throws {
        self.node = node
        self.section = section
        self.environment = environment
        self.baseDirectory = baseDirectory
        self.problems = problems
        switch node.value {
        case .mapping(let entries):
            var seen: Set<String> = []
            var unique: [ConfigNode.Entry] = []
            for entry in entries {
                guard seen.insert(entry.key).inserted else {
                    let error = ConfigError(file: node.file, line: entry.line, message: "duplicate key '\(Self.qualified(entry.key, in: section))'")
                    guard let problems else { throw error }
                    problems.record(error, keys: [Self.qualified(entry.key, in: section)])
                    continue
                }
                unique.append(entry)
            }
            self.entries = unique
        case .null:
            self.entries = []
        default:
            throw ConfigError(at: node, "'\(section.isEmpty ? "document" : section)' must be a mapping")
        }
    }

    /// The file this mapping came from.
    public var file: String { node.file }

    /// Whether this map records its problems in ``problems`` instead of throwing them.
    public var collects: Bool { problems != nil }

    /// The full dotted name of a key, for messages.
    public func qualified(_ key: String) -> String { Self.qualified(key, in: section) }

    private static func qualified(_ key: String, in section: String) -> String { section.isEmpty ? key : "\(section).\(key)" }

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

    /// An error located at a key (or at the mapping when the key is absent); at the variable when the
    /// environment gave the key's value.
    public func error(_ key: String, _ message: String) -> ConfigError {
        guard let entry = entries.first(where: { $0.key == key }) else { return ConfigError(at: node, message) }
        if let variable = entry.value.variable { return ConfigError(variable: variable, message: message) }
        return ConfigError(file: node.file, line: entry.line, message: message)
    }

    // MARK: Problems found by the caller

    /// A problem the caller found itself (a value the accessors cannot judge, two keys that exclude each other),
    /// placed at `key`'s line. Thrown when the map stops at the first problem; recorded when it collects, and
    /// the caller goes on.
    /// - Parameters:
    ///   - key: the key the problem is about.
    ///   - message: what is wrong, naming the key as ``qualified(_:)`` does.
    ///   - after: the keys the check depends on: when one of them already has a problem, this one is only a
    ///     follow-on of it and is dropped (collecting only).
    public func report(_ key: String, _ message: String, after: [String] = []) throws {
        try report(error(key, message), key: key, after: after)
    }

    /// A problem the caller found itself, at a line of its own (an entry of a list).
    /// - Parameters:
    ///   - error: the problem.
    ///   - key: the key the problem is about.
    ///   - after: the keys the check depends on (see ``report(_:_:after:)``).
    public func report(_ error: ConfigError, key: String, after: [String] = []) throws {
        guard let problems else { throw error }
        problems.record(error, keys: [qualified(key)], after: after.map(qualified))
    }

    /// Whether a key (or a key nested in it) has a problem already: a check that depends on it would only add a
    /// follow-on. Always false when the map stops at the first problem (there is none yet).
    public func hasProblem(_ key: String) -> Bool {
        problems?.concerns(qualified(key)) ?? false
    }

    /// Throws `error`, or records it under `keys` when collecting.
    private func fail(_ error: ConfigError, _ keys: String...) throws {
        guard let problems else { throw error }
        problems.record(error, keys: keys.map(qualified))
    }

    // MARK: Scalars

    /// A string. An unquoted value YAML reads as a number or a boolean (`client_id: 42`) is refused with the
    /// quoted spelling to use; a value from the environment, which has no quotes, is the string as given.
    public func string(_ key: String) throws -> String? {
        if let value = node(key), value.variable == nil, let type = value.implicitType, case .scalar(let text) = value.value {
            try fail(
                ConfigError(at: value, "'\(qualified(key))' must be a string, and \(text) is \(type.rawValue): write it quoted, \"\(text)\""), key)
            return nil
        }
        return try scalar(key, expected: "a string")
    }

    /// A single value; a list or mapping is refused with what was expected (`a whole number`, …).
    private func scalar(_ key: String, expected: String) throws -> String? {
        guard let value = node(key) else { return nil }
        guard case .scalar(let text) = value.value else {
            try fail(ConfigError(at: value, "'\(qualified(key))' must be \(expected)"), key)
            return nil
        }
        return try expand(text, at: value, key: key)
    }

    /// A string that must be written and not empty; `""` when it is not and the map collects.
    public func requiredString(_ key: String) throws -> String {
        guard let value = try string(key), !value.isEmpty else {
            try missing(key)
            return ""
        }
        return value
    }

    /// "'x' is required", and when a key nobody asked for is a near miss of it, where that one is written;
    /// nothing when the key already has a problem of its own (collecting).
    private func missing(_ key: String) throws {
        guard !hasProblem(key) else { return }
        let unasked = entries.filter { !known.contains($0.key) }
        if let near = KeySuggestion.closest(to: key, among: unasked.map(\.key)), let entry = unasked.first(where: { $0.key == near }) {
            // The near miss is this problem too: finish() does not report it again as an unknown key.
            try fail(
                ConfigError(
                    file: node.file, line: entry.line,
                    message: "'\(qualified(key))' is required; '\(qualified(near))' is not a known key: did you mean '\(key)'?"),
                key, near)
            return
        }
        try fail(error(key, "'\(qualified(key))' is required"), key)
    }

    /// A whole number, within `range` when one is given.
    public func int(_ key: String, range: ClosedRange<Int>? = nil) throws -> Int? {
        try ranged(key, "a whole number", range: range) { Int($0) }
    }

    /// A number (`0.25`, `1`), within `range` when one is given.
    public func number(_ key: String, range: ClosedRange<Double>? = nil) throws -> Double? {
        try ranged(key, "a number", range: range) { Double($0).flatMap { $0.isFinite ? $0 : nil } }
    }

    /// A scalar `parse` reads as `expected`, within `range` when one is given (``int(_:range:)``, ``number(_:range:)``).
    private func ranged<Value: Comparable>(
        _ key: String, _ expected: String, range: ClosedRange<Value>?, _ parse: (String) -> Value?
    ) throws -> Value? {
        guard let text = try scalar(key, expected: expected) else { return nil }
        guard let value = parse(text) else {
            try fail(error(key, "'\(qualified(key))' must be \(expected), not '\(text)'"), key)
            return nil
        }
        if let range, !range.contains(value) {
            try fail(error(key, "'\(qualified(key))' must be between \(range.lowerBound) and \(range.upperBound), not \(text)"), key)
            return nil
        }
        return value
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let text = try scalar(key, expected: "true or false") else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            try fail(error(key, "'\(qualified(key))' must be true or false, not '\(text)'"), key)
            return nil
        }
    }

    /// A string that must be one of `allowed`.
    public func choice(_ key: String, _ allowed: [String]) throws -> String? {
        guard let text = try scalar(key, expected: "one of \(allowed.joined(separator: ", "))") else { return nil }
        guard allowed.contains(text) else {
            try fail(error(key, "'\(qualified(key))' must be one of \(allowed.joined(separator: ", ")), not '\(text)'"), key)
            return nil
        }
        return text
    }

    /// An absolute `http` or `https` URL.
    public func url(_ key: String) throws -> String? {
        guard let text = try scalar(key, expected: "an absolute http(s) URL") else { return nil }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            // `encodedHost`: `host` and `percentEncodedHost` run every host through ICU's IDNA (and keep its
            // pages resident from start-up on); an ASCII host needs no IDNA to be validated.
            scheme == "http" || scheme == "https", components.encodedHost?.isEmpty == false
        else {
            try fail(error(key, "'\(qualified(key))' must be an absolute http(s) URL, not '\(text)'"), key)
            return nil
        }
        return text
    }

    /// An absolute `http` or `https` URL that must be written; ``placeholderURL`` when it is not (or is wrong)
    /// and the map collects.
    public func requiredURL(_ key: String) throws -> String {
        guard let value = try url(key) else {
            try missing(key)
            return Self.placeholderURL
        }
        return value
    }

    /// A list of strings; a single string is read as a one-element list.
    public func strings(_ key: String) throws -> [String]? {
        guard let value = node(key) else { return nil }
        switch value.value {
        case .scalar(let text): return try expand(text, at: value, key: key).map { [$0] }
        case .sequence(let items):
            var texts: [String] = []
            for item in items {
                guard case .scalar(let text) = item.value else {
                    try fail(ConfigError(at: item, "'\(qualified(key))' must be a list of strings"), key)
                    return nil
                }
                guard let expanded = try expand(text, at: item, key: key) else { return nil }
                texts.append(expanded)
            }
            return texts
        default:
            try fail(ConfigError(at: value, "'\(qualified(key))' must be a list of strings"), key)
            return nil
        }
    }

    // MARK: Secrets

    /// A secret, never written in the file itself: `key: "${ENV_VAR}"` (the whole value one reference) or
    /// `key_file: path`. Any other value of `key` is refused at its line, and never echoed in a message.
    public func secret(_ key: String) throws -> String? {
        try secret(key, allowingInline: { _ in false }, refusal: "must not be written inline")
    }

    /// A secret, of which some inline values are harmless (a PostgreSQL URL without a password).
    /// - Parameters:
    ///   - key: the key; `<key>_file` is its file form.
    ///   - allowingInline: whether an inline value, as written (before `${VAR}` expansion), holds no secret.
    ///   - refusal: what the refusal of the other inline values says after the key's name, e.g.
    ///     `must not be written inline`; the forms to use follow it.
    public func secret(_ key: String, allowingInline: (String) -> Bool, refusal: String) throws -> String? {
        let fileKey = key + "_file"
        let written = node(key)
        let path = try string(fileKey)
        defer {
            // A problem with either spelling is one problem of the secret: a check that needs it is a follow-on.
            if hasProblem(key) || hasProblem(fileKey) { problems?.markKeys([qualified(key), qualified(fileKey)]) }
        }
        if written != nil, node(fileKey) != nil {
            try fail(error(fileKey, "give either '\(qualified(key))' or '\(qualified(fileKey))', not both"), fileKey, key)
            return nil
        }
        if let written {
            guard let text = try inlineSecret(written, key: key, allowingInline: allowingInline, refusal: refusal) else { return nil }
            return try expand(text, at: written, key: key)
        }
        guard let path else { return nil }
        let text = try readFile(path, key: fileKey)
        return hasProblem(fileKey) ? nil : text
    }

    /// A secret this configuration does not use (a PostgreSQL password while the store is SQLite): it is neither
    /// expanded nor read, so an unset variable or a missing file is no error, but the inline rule of
    /// ``secret(_:allowingInline:refusal:)`` still holds: the file would keep the secret for the day it is used.
    public func unusedSecret(_ key: String, allowingInline: (String) -> Bool = { _ in false }, refusal: String = "must not be written inline") throws
    {
        _ = contains(key + "_file")
        // An empty value holds no secret; unused, it is left alone.
        guard let written = node(key) else { return }
        if case .null = written.value { return }
        _ = try inlineSecret(written, key: key, allowingInline: allowingInline, refusal: refusal)
    }

    /// The rule of secrets written in the file: the value as written, when it is one `${NAME}` or harmless
    /// inline (`allowingInline`); otherwise the refusal is recorded (never echoing the value) and nil. A value
    /// from the environment is not in the file: it is taken as it is.
    private func inlineSecret(_ written: ConfigNode, key: String, allowingInline: (String) -> Bool, refusal: String) throws -> String? {
        if written.variable != nil, case .scalar(let text) = written.value { return text }
        guard case .scalar(let text) = written.value, written.implicitType == nil, Self.isReference(text) || allowingInline(text) else {
            try fail(ConfigError(at: written, "'\(qualified(key))' \(refusal): use \(key): \"${ENV_VAR}\" or \(key)_file: path"), key)
            return nil
        }
        return text
    }

    /// Whether a value is exactly one `${NAME}` reference.
    public static func isReference(_ text: String) -> Bool {
        text.hasPrefix("${") && text.hasSuffix("}") && text.count > 3 && !text.dropFirst(2).dropLast().contains { "${}".contains($0) }
    }

    /// Reads a file named by a key, relative to the configuration's directory; `""` when it cannot be read and
    /// the map collects.
    public func readFile(_ path: String, key: String) throws -> String {
        let resolved = resolve(path)
        guard let data = FileManager.default.contents(atPath: resolved),
            var text = String(data: data, encoding: .utf8)
        else {
            try fail(error(key, "'\(qualified(key))': cannot read file '\(path)'"), key)
            return ""
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

    /// A nested mapping, nil when absent (or, collecting, when it is not a mapping).
    public func map(_ key: String) throws -> ConfigMap? {
        guard let value = node(key) else { return nil }
        return try nested(value, section: qualified(key), key: key)
    }

    /// A nested mapping, or an empty one when absent, so defaults apply.
    public func mapOrEmpty(_ key: String) throws -> ConfigMap {
        if let map = try map(key) { return map }
        return try ConfigMap(
            ConfigNode(.mapping([]), file: node.file, line: node.line), section: qualified(key),
            environment: environment, baseDirectory: baseDirectory, problems: problems)
    }

    public func maps(_ key: String) throws -> [ConfigMap] {
        guard let value = node(key) else { return [] }
        guard case .sequence(let items) = value.value else {
            try fail(ConfigError(at: value, "'\(qualified(key))' must be a list"), key)
            return []
        }
        var maps: [ConfigMap] = []
        for (index, item) in items.enumerated() {
            if let map = try nested(item, section: "\(qualified(key))[\(index)]", key: "\(key)[\(index)]") { maps.append(map) }
        }
        return maps
    }

    /// A map over a nested node sharing this map's settings; a node that is not a mapping is a problem of `key`.
    private func nested(_ value: ConfigNode, section: String, key: String) throws -> ConfigMap? {
        do {
            return try ConfigMap(value, section: section, environment: environment, baseDirectory: baseDirectory, problems: problems)
        } catch let error as ConfigError {
            try fail(error, key)
            return nil
        }
    }

    /// Refuses every key no accessor asked for, each with the known key it most likely meant.
    public func finish() throws {
        let unknown = entries.filter { !known.contains($0.key) }.map { entry in
            var message = "unknown key '\(qualified(entry.key))'"
            if let near = KeySuggestion.closest(to: entry.key, among: known) { message += ": did you mean '\(qualified(near))'?" }
            return (key: entry.key, error: ConfigError(file: node.file, line: entry.line, message: message))
        }
        if let problems {
            for (key, error) in unknown { problems.record(error, keys: [qualified(key)]) }
            return
        }
        switch unknown.count {
        case 0: return
        case 1: throw unknown[0].error
        default: throw ConfigErrorList(unknown.map(\.error))
        }
    }

    // MARK: Private

    /// Replaces `${VAR}` with the environment's value; an unset variable is an error (nil when collecting). A value
    /// that came from the environment itself is taken literally.
    private func expand(_ text: String, at node: ConfigNode, key: String) throws -> String? {
        guard node.variable == nil, text.contains("${") else { return text }
        var result = ""
        for piece in EnvironmentReference.pieces(of: text) {
            switch piece {
            case .text(let literal):
                result += literal
            case .unterminated:
                try fail(ConfigError(at: node, "'\(qualified(key))': unterminated '${'"), key)
                return nil
            case .variable(let name):
                guard let value = environment[name] else {
                    try fail(
                        ConfigError(
                            file: node.file, line: node.line, message: "'\(qualified(key))': environment variable \(name) is not set",
                            unsetVariable: name),
                        key)
                    return nil
                }
                result += value
            }
        }
        return result
    }
}
