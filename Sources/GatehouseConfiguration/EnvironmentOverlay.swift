import Foundation
import GatehouseCore

/// Puts the values of `GATEHOUSE_*` variables into a parsed `gatehouse.yaml` before it is read, so that the
/// environment wins over the file and the typed reader (``ConfigMap``) checks both alike.
///
/// Each value becomes a node located at its variable (``ConfigNode/environment(_:variable:implicitType:)``):
/// a problem with it is printed as `GATEHOUSE_STORE_KIND: 'store.kind' must be one of …`, among the file's own
/// problems. A single value is typed as YAML types an unquoted scalar (``YAMLCoreSchema``), and an empty value,
/// `~` or `null` is YAML's null: the key's default, whatever the file says. A list is a JSON array of strings.
///
/// ```swift
/// let overlay = EnvironmentOverlay(root: document.root, environment: ProcessInfo.processInfo.environment)
/// let map = try ConfigMap(overlay.root, problems: problems)
/// ```
struct EnvironmentOverlay {
    /// The tree with the environment's values in place.
    private(set) var root: ConfigNode
    /// The variables whose values were put in, in the order of ``EnvironmentSettings/all``.
    private(set) var applied: [String] = []
    /// Variables whose text cannot be read (a list that is no JSON array of strings), each with the dotted path
    /// of its key; that key keeps the file's value.
    private(set) var problems: [(error: ConfigError, key: String)] = []

    /// - Parameters:
    ///   - root: the parsed file, or an empty mapping when there is none.
    ///   - environment: the variables; only ``EnvironmentSettings/all``'s are read.
    init(root: ConfigNode, environment: [String: String]) {
        self.root = root
        for setting in EnvironmentSettings.all {
            guard let text = environment[setting.variable] else { continue }
            guard let value = Self.node(text, for: setting) else {
                let error = ConfigError(
                    variable: setting.variable,
                    message: "'\(setting.path)' is a list: write it as a JSON array of strings, like [\"first\", \"second\"]")
                problems.append((error: error, key: setting.path))
                continue
            }
            // A section the file writes as something other than a mapping stays as written: its own error says so.
            guard let updated = Self.setting(setting.keys[...], to: value, in: self.root, variable: setting.variable) else { continue }
            self.root = updated
            applied.append(setting.variable)
        }
    }

    /// The node of a variable's text; nil when a list is not a JSON array of strings.
    private static func node(_ text: String, for setting: EnvironmentSetting) -> ConfigNode? {
        if ["", "~", "null", "Null", "NULL"].contains(text) { return .environment(.null, variable: setting.variable) }
        switch setting.shape {
        case .scalar:
            return .environment(.scalar(text), variable: setting.variable, implicitType: YAMLCoreSchema.implicitType(of: text))
        case .list:
            guard let items = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else { return nil }
            return .environment(.sequence(items.map { .environment(.scalar($0), variable: setting.variable) }), variable: setting.variable)
        }
    }

    /// `node` with `value` at `keys`, creating the mappings on the way; nil when one on the way is no mapping.
    private static func setting(_ keys: ArraySlice<String>, to value: ConfigNode, in node: ConfigNode, variable: String) -> ConfigNode? {
        guard let key = keys.first else { return value }
        var entries: [ConfigNode.Entry]
        switch node.value {
        case .mapping(let existing): entries = existing
        case .null: entries = []
        case .scalar, .sequence: return nil
        }
        let index = entries.firstIndex { $0.key == key }
        let child = index.map { entries[$0].value } ?? .environment(.mapping([]), variable: variable)
        guard let updated = setting(keys.dropFirst(), to: value, in: child, variable: variable) else { return nil }
        if let index {
            entries[index].value = updated
        } else {
            entries.append(ConfigNode.Entry(key: key, line: 0, value: updated))
        }
        var result = node
        result.value = .mapping(entries)
        return result
    }
}
