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
        var source = text
        var renamed = 0
        let composed: Node?
        while true {
            do {
                // `.basic`: no implicit tags from Yams (its rules are ICU regular expressions); plain scalars are typed
                // by `YAMLCoreSchema` where a key asks for a number or a boolean.
                composed = try Yams.compose(yaml: source, .basic)
                break
            } catch let error as YamlError {
                // Yams refuses a whole file for one repeated key. The repetition is renamed so that the rest of the file
                // is read, and gets its own name back in the tree, where ``ConfigMap`` reports it as one problem among
                // the file's others.
                if case .duplicatedKeysInMapping(let duplicates, let context) = error, renamed < Self.maximumRenames,
                    let key = duplicates.first,
                    let edited = Self.renamingRepetition(of: key, after: context.mark, in: source, number: renamed)
                {
                    source = edited
                    renamed += 1
                    continue
                }
                throw Self.configError(error, file: file, text: source)
            }
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
            return ConfigNode(
                .scalar(scalar.string), file: file, line: line,
                implicitType: scalar.style == .plain ? YAMLCoreSchema.implicitType(of: scalar.string) : nil)
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
                let name = originalKey(keyScalar.string)
                var converted = try convert(value, file: file, fallbackLine: keyLine)
                switch converted.value {
                case .null, .mapping, .sequence:
                    // An empty value has no token of its own, and a block collection starts on the line after
                    // its key; either is reported where its key is written ("'api.url' is required" at `api:`).
                    converted.line = keyLine
                case .scalar:
                    break
                }
                entries.append(ConfigNode.Entry(key: name, line: keyLine, value: converted))
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

    /// How many keys may be renamed in search of the repetitions of duplicated keys before the file is refused.
    private static let maximumRenames = 200

    /// What a renamed key starts with: U+0001, then its number, U+0001 again, and the key as written.
    private static let renameMark = "\u{1}"

    /// The key a renamed repetition had (``renamingRepetition(of:after:in:number:)``); any other key as it is.
    private static func originalKey(_ key: String) -> String {
        guard key.hasPrefix(renameMark) else { return key }
        let parts = key.split(separator: Character(renameMark), maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? String(parts[2]) : key
    }

    /// `text` with the first spelling of `key` after its first occurrence (at `mark`) that is written as a key
    /// replaced by a double-quoted name no file uses (``renameMark``), or nil when there is none. Each call takes
    /// the next one: the spelling renamed is no longer found. A spelling that is not the repetition (a key of a
    /// nested mapping) is harmless, since the tree gets every name back, and the next call takes the next one.
    private static func renamingRepetition(of key: String, after mark: Mark, in text: String, number: Int) -> String? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { Array(String($0).unicodeScalars) }
        guard mark.line >= 1, mark.line <= lines.count,
            let (line, range) = keySpellings(of: key, after: mark, in: lines).first
        else { return nil }
        let escaped = key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let replacement = "\"\\x01\(number)\\x01\(escaped)\""
        lines[line - 1].replaceSubrange(range, with: replacement.unicodeScalars)
        return lines.map { String(String.UnicodeScalarView($0)) }.joined(separator: "\n")
    }

    /// Where `key` is written as a key after its first occurrence at `mark`, in text order: the line (1-based) and
    /// the range of the spelling (`key`, `"key"` or `'key'`) in that line's scalars. A key is a spelling at the start
    /// of a line (after the indentation and any `- `), or after `{` or `,` (flow style), followed by `:`.
    private static func keySpellings(of key: String, after mark: Mark, in lines: [[Unicode.Scalar]]) -> [(Int, Range<Int>)] {
        let spellings = [key, "\"\(key)\"", "'\(key)'"].map { Array($0.unicodeScalars) }
        var found: [(Int, Range<Int>)] = []
        for index in (mark.line - 1)..<lines.count {
            let line = lines[index]
            let start = index == mark.line - 1 ? min(line.count, mark.column - 1 + key.unicodeScalars.count) : 0
            var position = start
            while position < line.count {
                for spelling in spellings {
                    let end = position + spelling.count
                    guard end <= line.count, Array(line[position..<end]) == spelling else { continue }
                    guard isKeyStart(line, position), isFollowedByColon(line, end) else { continue }
                    found.append((index + 1, position..<end))
                }
                position += 1
            }
        }
        return found
    }

    /// Whether a key may start at `position`: only spaces and `- ` before it on its line, or `{` or `,` and spaces.
    private static func isKeyStart(_ line: [Unicode.Scalar], _ position: Int) -> Bool {
        var before = position - 1
        while before >= 0, line[before] == " " { before -= 1 }
        if before < 0 { return true }
        if line[before] == "{" || line[before] == "," { return true }
        guard line[before] == "-" else { return false }
        return line[0..<before].allSatisfy { $0 == " " || $0 == "-" }
    }

    /// Whether `:` follows at `position`, after spaces, and ends the key (a space, a flow character or the line's end).
    private static func isFollowedByColon(_ line: [Unicode.Scalar], _ position: Int) -> Bool {
        var after = position
        while after < line.count, line[after] == " " { after += 1 }
        guard after < line.count, line[after] == ":" else { return false }
        return after + 1 == line.count || [" ", ",", "}", "]", "\t", "\r"].contains(line[after + 1])
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
