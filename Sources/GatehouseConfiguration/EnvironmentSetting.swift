/// One key of `gatehouse.yaml` that an environment variable may set: `store.url` ← `GATEHOUSE_STORE_URL`.
///
/// The variable is `GATEHOUSE_` and the key's dotted path in upper snake case. Because key names contain `_`
/// themselves (`idle_timeout_seconds`), a variable is matched against the list of these settings
/// (``EnvironmentSettings/all``), never split back into a path.
public struct EnvironmentSetting: Sendable, Equatable {
    /// How the variable's text is read.
    public enum Shape: Sendable, Equatable {
        /// One value, typed as YAML types an unquoted scalar (`true`, `42`, text).
        case scalar
        /// A list of strings, written as a JSON array (`["10.0.0.0/8", "127.0.0.1"]`).
        case list
    }

    /// The key's dotted path, e.g. `sessions.cookie.secure`.
    public let path: String
    /// How the variable's text is read.
    public let shape: Shape

    /// - Parameters:
    ///   - path: the key's dotted path.
    ///   - shape: a single value or a list of strings.
    public init(_ path: String, _ shape: Shape = .scalar) {
        self.path = path
        self.shape = shape
    }

    /// The environment variable that sets the key: `GATEHOUSE_SESSIONS_COOKIE_SECURE`.
    public var variable: String { Self.variable(for: path) }

    /// The keys of ``path``, outermost first.
    public var keys: [String] { path.split(separator: ".").map(String.init) }

    /// `GATEHOUSE_` and a dotted path in upper snake case.
    /// - Parameter path: a dotted key path, e.g. `store.url`.
    public static func variable(for path: String) -> String {
        EnvironmentSettings.prefix + String(path.uppercased().map { $0 == "." ? "_" : $0 })
    }
}
