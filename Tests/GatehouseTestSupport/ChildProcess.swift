public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Child processes of the tests (`curl`, PostgreSQL's tools and server), started with `posix_spawn` and waited for
/// with `waitpid`.
///
/// Not `Foundation.Process`: on Linux its termination notice can be missed when other children come and go at the
/// same moment, and then a test waits forever for a child that has long exited.
///
/// A child inherits no descriptor but its standard ones. SwiftNIO's sockets are not close-on-exec: a child would
/// otherwise hold every socket the tests had open when it started, and the port of a socket a test closed (a stopped
/// server, a port claimed and bound again) would stay taken as long as the child lives; the PostgreSQL server lives
/// as long as the tests.
public enum ChildProcess {
    public struct SpawnFailure: Error, CustomStringConvertible {
        public var description: String
    }

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

    /// Starts `executable`: standard input from `/dev/null`, standard output into `stdout` (nil: `/dev/null`), standard
    /// error into `stderr` (nil: where standard output goes).
    public static func start(_ executable: String, _ arguments: [String], stdout: String?, stderr: String?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let stderr {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        guard addCloseFrom(&actions, 3) == 0 else { throw SpawnFailure(description: "posix_spawn_file_actions_addclosefrom_np failed") }
        var cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw SpawnFailure(description: "cannot start \(executable): errno \(spawned)") }
        return pid
    }

    /// Waits for a started child; its exit status (or 128 + signal).
    public static func wait(_ pid: pid_t) throws -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw SpawnFailure(description: "waitpid: errno \(errno)") }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which its headers declare only with
    /// `_GNU_SOURCE`, so Swift's `Glibc` does not see it.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np is missing")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
