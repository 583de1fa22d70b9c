import Foundation

/// Opens a URL in the user's browser for `gatehouse login`: `$BROWSER` when it is set and not empty, else
/// `xdg-open` or `open` from `PATH`. Best effort: a failure only means the user opens the printed URL.
enum BrowserLauncher {
    /// Starts the browser on `url` without waiting for it; returns whether a launcher was started.
    @discardableResult
    static func open(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        let process = Process()
        if let browser = environment["BROWSER"]?.trimmingCharacters(in: .whitespaces), !browser.isEmpty {
            // The usual convention: a command, or several separated by `:`, where `%s` stands for the URL.
            let command = String(browser.split(separator: ":").first ?? Substring(browser))
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let script = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : command + " \"$1\""
            process.arguments = ["-c", script, "sh", url]
        } else if let opener = ["xdg-open", "open"].lazy.compactMap({ executable(named: $0, environment: environment) }).first {
            process.executableURL = URL(fileURLWithPath: opener)
            process.arguments = [url]
        } else {
            return false
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            return true
        } catch {
            return false
        }
    }

    /// The path of an executable called `name` in `PATH`.
    private static func executable(named name: String, environment: [String: String]) -> String? {
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}
