/// The problems of one configuration file, gathered instead of thrown so that one run reports all of them.
///
/// A ``ConfigMap`` created with a `ConfigProblems` (and every map nested in it, which shares it) *collects*:
/// an accessor that finds a problem records it here and answers `nil` (optional accessors) or a placeholder
/// (`required…`), and ``ConfigMap/finish()`` records every unknown key, so that reading goes on to the end of
/// the file. Each problem is recorded under the keys it concerns, and a problem about a key that already has one
/// is dropped: it would only be a follow-on of the first (a placeholder checked against another key, a secret
/// that is missing because its variable is unset).
///
/// ```swift
/// let problems = ConfigProblems()
/// let map = try ConfigMap(document.root, problems: problems)
/// let provider = try kind.make(descriptor: descriptor, settings: map, context: context)
/// if !problems.isEmpty { throw ConfigErrorList(problems.sortedByLine()) }
/// ```
public final class ConfigProblems {
    /// The problems in the order they were recorded.
    public private(set) var errors: [ConfigError] = []
    /// Dotted names of the keys that have a problem (`token_endpoint`, `api.url`, `issuers[0].domain`).
    private var keys: Set<String> = []

    /// No problems yet.
    public init() {}

    /// Whether no problem was recorded.
    public var isEmpty: Bool { errors.isEmpty }

    /// The problems ordered by line, keeping the order of problems on the same line.
    public func sortedByLine() -> [ConfigError] {
        errors.enumerated()
            .sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            .map(\.element)
    }

    /// Whether a key, a section above it or a key below it has a problem.
    /// - Parameter key: the dotted name (``ConfigMap/qualified(_:)``).
    public func concerns(_ key: String) -> Bool {
        keys.contains { recorded in
            recorded == key || Self.isNested(recorded, under: key) || Self.isNested(key, under: recorded)
        }
    }

    /// Records a problem about `keys`, unless one of them already has a problem.
    /// - Parameters:
    ///   - error: the problem.
    ///   - keys: the dotted names it concerns; the first is where it is written.
    ///   - after: keys whose own problem would make this one a follow-on (a check of one key against another).
    public func record(_ error: ConfigError, keys: [String], after: [String] = []) {
        guard !(keys + after).contains(where: concerns) else { return }
        errors.append(error)
        self.keys.formUnion(keys)
    }

    /// Marks keys as having a problem without a message of their own (the other spelling of a secret,
    /// `client_secret_file` next to `client_secret`), so that their follow-ons are dropped too.
    public func markKeys(_ keys: [String]) {
        self.keys.formUnion(keys)
    }

    /// Takes an error that reading threw instead of recording, dropping what is only a follow-on: a
    /// problem on a line that already has one, or an error without a location once problems are recorded
    /// (code that met a placeholder).
    /// - Parameters:
    ///   - error: what was thrown.
    ///   - file: where a problem without a location is placed (at line 1).
    public func absorb(_ error: any Error, file: String) {
        let thrown: [ConfigError]
        switch error {
        case let error as ConfigError: thrown = [error]
        case let error as ConfigErrorList: thrown = error.errors
        default:
            guard errors.isEmpty else { return }
            thrown = [ConfigError(file: file, line: 1, message: String(describing: error))]
        }
        for error in thrown where !errors.contains(where: { $0.file == error.file && $0.line == error.line }) {
            errors.append(error)
        }
    }

    /// Whether `key` is a key inside the section `section` (`api.url` in `api`, `issuers[0].domain` in `issuers`).
    private static func isNested(_ key: String, under section: String) -> Bool {
        guard !section.isEmpty, key.hasPrefix(section) else { return false }
        let next = key.dropFirst(section.count).first
        return next == "." || next == "["
    }
}
