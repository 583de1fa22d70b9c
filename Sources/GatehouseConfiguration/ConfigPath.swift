import Foundation

/// Resolves relative paths in configuration files against the file's directory.
enum ConfigPath {
    /// `path` made absolute against `base` and tidied (`./` and `..` removed); absolute paths are only tidied.
    static func resolve(_ path: String, against base: String) -> String {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL.path }
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: base, isDirectory: true)).standardizedFileURL.path
    }

    /// The absolute directory holding `file`.
    static func directory(of file: String) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
    }

    /// The process's current directory.
    static var current: String { FileManager.default.currentDirectoryPath }
}
