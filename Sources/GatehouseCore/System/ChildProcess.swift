#if canImport(Glibc)
public import Glibc
#endif

/// Child processes (the CLI's browser; the tests' `curl` and PostgreSQL), started with `posix_spawn` and waited for
/// with `waitpid`.
///
/// A child inherits no descriptor but its standard ones. SwiftNIO's sockets are not close-on-exec: a child would
/// otherwise hold every socket open when it started, and keep it as long as it lives. A browser that `gatehouse login`
/// starts would hold the listener waiting for the sign-in to come back (the port stays taken, and a late sign-in waits
/// on a socket nobody serves, after the command has ended); a test's child, the port of a server a test stopped.
///
/// Not `Foundation.Process`, which hands every open descriptor on, and whose termination notice on Linux can be missed
/// when other children come and go at the same moment.
public enum ChildProcess {
    /// A child that could not be started or waited for, and why.
    public struct SpawnFailure: Error, CustomStringConvertible {
        public var description: String
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
        guard addCloseFrom(&actions, 3) == 0 else {
            throw SpawnFailure(description: "cannot start \(executable): posix_spawn_file_actions_addclosefrom_np (glibc 2.34) failed")
        }
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
        // Without it (glibc before 2.34), no child is started rather than one holding the caller's sockets.
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return { _, _ in ENOSYS } }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
