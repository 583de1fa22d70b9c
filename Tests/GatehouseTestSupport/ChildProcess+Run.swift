public import Foundation
public import GatehouseCore

extension ChildProcess {
    /// Runs `executable` with `arguments` to completion on a thread of its own (never on one of the few threads every
    /// test's tasks share), its standard output and error into the given files; returns the exit status (or 128 +
    /// signal).
    public static func run(_ executable: String, _ arguments: [String], stdout: URL, stderr: URL) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try wait(start(executable, arguments, stdout: stdout.path, stderr: stderr.path)) })
            }
        }
    }
}
