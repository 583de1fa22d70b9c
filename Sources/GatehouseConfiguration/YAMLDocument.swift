import Foundation
public import GatehouseCore
import Yams

/// One YAML file turned into a ``ConfigNode`` tree that remembers the 1-based line of every node and key.
///
/// A mapping or sequence that is the value of a key carries the key's line, so problems with a whole section
/// point at the section's name; its entries and items keep their own lines.
///
/// Nothing outside this module sees YAML: adapters read a ``ConfigMap`` over ``root``.
///
/// ```swift
/// let document = try YAMLDocument(contentsOfFile: "Providers/surfnet.yaml")
/// let map = try ConfigMap(document.root)
/// ```
public struct YAMLDocument: Sendable {
    /// The file name used in messages.
    public let file: String
    /// The document's root; an empty file is an empty mapping.
    public let root: ConfigNode

    /// Parses YAML text.
    /// - Parameters:
    ///   - text: the YAML source.
    ///   - file: the name used in `file:line` messages.
    /// - Throws: ``ConfigError`` at the line of a syntax error.
    public init(text: String, file: String) throws {
        self.file = file
        let composed: Node?
        do {
            // `.basic`: no implicit tags from Yams (its rules are ICU regular expressions); plain scalars are typed by
            // `YAMLCoreSchema` where a key asks for a number or a boolean.
            composed = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw Self.configError(error, file: file, text: text)
        }
        guard let composed else {
            root = .emptyMapping(file: file)
            return
        }
        let node = try Self.convert(composed, file: file, fallbackLine: 1)
        if case .null = node.value {
            root = .emptyMapping(file: file)
        } else {
            root = node
        }
    }

    /// Reads and parses a YAML file.
    /// - Parameter path: the file to read; also the name used in messages.
    /// - Throws: ``ConfigError`` when the file cannot be read or is not valid YAML.
    public init(contentsOfFile path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(file: path, line: 1, message: "cannot read file: \(Self.unreadableReason(path))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, line: 1, message: "file is not UTF-8 text")
        }
        try self.init(text: text, file: path)
    }

    /// Why `path` cannot be read, as the system says it ("No such file or directory", "Permission denied", …).
    static func unreadableReason(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { return "Is a directory" }
        let descriptor = open(path, O_RDONLY)
        guard descriptor < 0 else {
            close(descriptor)
            return "read error"
        }
        return String(cString: strerror(errno))
    }

    // MARK: Private

    private static func convert(_ node: Node, file: String, fallbackLine: Int) throws -> ConfigNode {
        let line = node.mark?.line ?? fallbackLine
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
                return ConfigNode(.null, file: file, line: line)
            }
            return ConfigNode(.scalar(scalar.string), file: file, line: line, implicitType: scalar.style == .plain ? YAMLCoreSchema.implicitType(of: scalar.string) : nil)
        case .sequence(let sequence):
            let items = try sequence.map { try convert($0, file: file, fallbackLine: line) }
            return ConfigNode(.sequence(items), file: file, line: line)
        case .mapping(let mapping):
            var entries: [ConfigNode.Entry] = []
            for (key, value) in mapping {
                let keyLine = key.mark?.line ?? line
                guard case .scalar(let keyScalar) = key else {
                    throw ConfigError(file: file, line: keyLine, message: "mapping keys must be plain strings")
                }
                var converted = try convert(value, file: file, fallbackLine: keyLine)
                switch converted.value {
                case .null, .mapping, .sequence:
                    // An empty value has no token of its own, and a block collection starts on the line after
                    // its key; either is reported where its key is written ("'api.url' is required" at `api:`).
                    converted.line = keyLine
                case .scalar:
                    break
                }
                entries.append(ConfigNode.Entry(key: keyScalar.string, line: keyLine, value: converted))
            }
            return ConfigNode(.mapping(entries), file: file, line: line)
        case .alias(let alias):
            throw ConfigError(file: file, line: alias.mark?.line ?? line, message: "YAML aliases are not supported")
        }
    }

    private static func configError(_ error: YamlError, file: String, text: String) -> ConfigError {
        switch error {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            var message = "invalid YAML: \(problem)"
            if let context { message += " (\(context.text) at line \(context.mark.line))" }
            return ConfigError(file: file, line: mark.line, message: message)
        case .reader(let problem, let offset, _, _):
            let line = offset.map { text.prefix($0).reduce(1) { $1 == "\n" ? $0 + 1 : $0 } } ?? 1
            return ConfigError(file: file, line: line, message: "invalid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let key = duplicates.first ?? ""
            let line = duplicateLine(of: key, after: context.mark, in: text)
            return ConfigError(file: file, line: line, message: "duplicate key '\(key)'")
        default:
            return ConfigError(file: file, line: 1, message: "invalid YAML: \(error)")
        }
    }

    /// Yams names the first occurrence of a duplicated key; the error belongs to the repetition, which is
    /// the next key at the same column (block style) or later on the same line (flow style).
    private static func duplicateLine(of key: String, after mark: Mark, in text: String) -> Int {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard mark.line >= 1, mark.line <= lines.count else { return mark.line }
        let first = lines[mark.line - 1]
        let rest = String(first.unicodeScalars.dropFirst(mark.column - 1 + key.unicodeScalars.count))
        if rest.contains("\(key):") || rest.contains("\"\(key)\"") || rest.contains("'\(key)'") {
            return mark.line
        }
        let indent = mark.column - 1
        for index in mark.line..<lines.count {
            let candidate = lines[index]
            let leading = candidate.prefix { $0 == " " }.count
            let trimmed = candidate.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if leading < indent { break }
            guard leading == indent else { continue }
            for spelling in [key, "\"\(key)\"", "'\(key)'"] where trimmed.hasPrefix(spelling) {
                if trimmed.dropFirst(spelling.count).drop(while: { $0 == " " }).hasPrefix(":") { return index + 1 }
            }
        }
        return mark.line
    }
}
