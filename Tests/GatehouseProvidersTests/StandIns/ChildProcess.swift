import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn` and `waitpid` on a thread of its own.
///
/// Not `Foundation.Process`: on Linux its termination notice can be missed when other children (the
/// PostgreSQL test server's tools) come and go at the same moment, and then a test waits forever for a
/// `curl` that has long exited.
enum ChildProcess {
    /// Runs `executable` with `arguments`, its standard output and error into the given files; returns the
    /// exit status (or 128 + signal).
    static func run(_ executable: String, _ arguments: [String], stdout: URL, stderr: URL) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(executable, arguments, stdout: stdout.path, stderr: stderr.path) })
            }
        }
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        var description: String
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], stdout: String, stderr: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw SpawnFailure(description: "cannot start \(executable): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw SpawnFailure(description: "waitpid: errno \(errno)") }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
