import Foundation
import GatehouseCore

/// Opens a URL in the user's browser for `gatehouse login`: `$BROWSER` when it is set and not empty, else
/// `xdg-open` or `open` from `PATH`. Best effort: a failure only means the user opens the printed URL.
///
/// The browser inherits no descriptor of the command (``ChildProcess``): not the listener waiting for the sign-in
/// to come back, nor a connection to the gateway.
enum BrowserLauncher {
    /// Starts the browser on `url` without waiting for it; returns whether a launcher was started.
    @discardableResult
    static func open(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        let program: String
        let arguments: [String]
        if let browser = environment["BROWSER"]?.trimmingCharacters(in: .whitespaces), !browser.isEmpty {
            // The usual convention: a command, or several separated by `:`, where `%s` stands for the URL.
            let command = String(browser.split(separator: ":").first ?? Substring(browser))
            let script = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : command + " \"$1\""
            (program, arguments) = ("/bin/sh", ["-c", script, "sh", url])
        } else if let opener = ["xdg-open", "open"].lazy.compactMap({ executable(named: $0, environment: environment) }).first {
            (program, arguments) = (opener, [url])
        } else {
            return false
        }
        guard let pid = try? ChildProcess.start(program, arguments, stdout: nil, stderr: nil) else { return false }
        // Reaped when it ends (a launcher such as `xdg-open` ends at once), not left a zombie while the command waits.
        Thread.detachNewThread { _ = try? ChildProcess.wait(pid) }
        return true
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
