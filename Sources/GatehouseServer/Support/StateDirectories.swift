import Foundation
public import GatehouseConfiguration
public import GatehouseCore

/// The directories the gateway writes: the data directory (`data_dir`), where keys are generated when `keys` names
/// none, and the SQLite store's directory. `gatehouse check` reports one it could not create or write; `serve`
/// refuses to start with the same line, instead of failing on the first file it cannot create.
///
/// ```swift
/// let problems = StateDirectories.problems(in: configuration)
/// guard problems.isEmpty else { throw ConfigurationErrors(problems) }
/// ```
public enum StateDirectories {
    /// One line per directory (or SQLite file) the configuration has the gateway write that it cannot, each at the
    /// setting that names it, saying what to do. Nothing is created.
    /// - Parameters:
    ///   - configuration: the configuration as read.
    ///   - generatingKeys: whether keys `keys` does not name are generated (`serve`), or only the store is opened
    ///     (`migrate`).
    public static func problems(in configuration: GatewayConfiguration, generatingKeys: Bool = true) -> [ConfigError] {
        var needs: [(directory: String, location: ConfigLocation, advice: String)] = []
        let data = configuration.dataDirectory
        let dataAdvice = "set data_dir (or GATEHOUSE_DATA_DIR) to a directory this user can write, or let it write this one"
        let generated = [(configuration.keys.sealing.isEmpty, "sealing-k1.key"), (configuration.keys.signing.isEmpty, "signing-s1.pem")]
        let missing = generated.contains { isGenerated, name in isGenerated && !exists((data as NSString).appendingPathComponent(name)) }
        if generatingKeys, missing {
            needs.append((data, configuration.dataDirectoryLocation, dataAdvice))
        }
        var problems: [ConfigError] = []
        if configuration.store.kind == .sqlite {
            let path = configuration.store.path
            let directory = (path as NSString).deletingLastPathComponent
            let inData = configuration.storePathLocation == configuration.dataDirectoryLocation
            let advice = inData ? dataAdvice : "set store.path (or GATEHOUSE_STORE_PATH) to a file in a directory this user can write"
            if !needs.contains(where: { $0.directory == directory }) {
                needs.append((directory, configuration.storePathLocation, advice))
            }
            if exists(path), access(path, R_OK | W_OK) != 0 {
                problems.append(configuration.storePathLocation.error("the SQLite store '\(path)' is not writable by uid \(getuid()); \(advice)"))
            }
        }
        for need in needs {
            if let reason = problem(need.directory, isData: need.directory == data) {
                problems.insert(need.location.error("\(reason); \(need.advice)"), at: 0)
            }
        }
        return problems
    }

    // MARK: Private

    private static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// Why `directory` cannot be created or written by this process, in words; nil when it can.
    private static func problem(_ directory: String, isData: Bool) -> String? {
        let name = isData ? "the data directory '\(directory)'" : "the directory '\(directory)'"
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { return "\(name) is a file, not a directory" }
            guard access(directory, W_OK | X_OK) == 0 else { return "\(name) is not writable by uid \(getuid()) (\(reason(errno)))" }
            return nil
        }
        // Created with its missing parents: the nearest one that exists must let this user create entries.
        var parent = (directory as NSString).deletingLastPathComponent
        while !parent.isEmpty, parent != "/", !FileManager.default.fileExists(atPath: parent) {
            parent = (parent as NSString).deletingLastPathComponent
        }
        if parent.isEmpty { parent = "/" }
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            return "\(name) cannot be created: '\(parent)' is not a directory"
        }
        guard access(parent, W_OK | X_OK) == 0 else {
            return "\(name) cannot be created: '\(parent)' is not writable by uid \(getuid()) (\(reason(errno)))"
        }
        return nil
    }

    /// `Permission denied`, `Read-only file system`: the system's words for `code`.
    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
