import Foundation

/// The client's terminal output, written straight to the file descriptors (no buffering), so that a line such
/// as `Open this URL to sign in: …` reaches a pipe at once.
enum ClientOutput {
    /// One line on stdout.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// One line on stderr.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Bytes on stdout, as they are.
    static func raw(_ data: Data) {
        guard !data.isEmpty else { return }
        FileHandle.standardOutput.write(data)
    }
}
