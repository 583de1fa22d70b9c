import Foundation
import GatehouseCore
import GatehouseStore
import GatehouseTestSupport
import Logging
import NIOCore
import NIOPosix

/// A throwaway PostgreSQL server for the store tests: `initdb` and `pg_ctl` from Debian's packages in a
/// temporary directory, trust authentication, loopback only, on a free port, TLS on (self-signed). One server per test
/// process, one fresh database per test. A watcher process stops it and removes the directory when the
/// test process exits, however it exits.
///
/// `initdb` refuses to run as root, so as root the server runs as the `postgres` user (`runuser`).
///
/// The outage tests make servers of their own (``init()``), which they stop, pause and bring back.
actor PostgresTestServer {
    static let shared = PostgresTestServer()

    /// A running server: where it listens and where its files are.
    struct Instance: Sendable {
        var port: Int
        var data: String
        var directory: String
        /// `pg_ctl start -o …`, to start it again on the same port.
        var options: String
    }

    /// The directory holding `initdb`, `pg_ctl`, `psql`, or nil.
    static let binDirectory: String? = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        return versions.map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }()

    /// Whether the postgres cases run: PostgreSQL is installed, or every test must run (`GATEHOUSE_TEST_REQUIRE_ALL`,
    /// which scripts/test sets, or `CI`), where its absence is a failure.
    static let isEnabled: Bool = {
        if binDirectory != nil { return true }
        let environment = ProcessInfo.processInfo.environment
        if ["GATEHOUSE_TEST_REQUIRE_ALL", "CI"].contains(where: { !(environment[$0] ?? "").isEmpty }) { return true }
        FileHandle.standardError.write(
            Data(
                "note: skipping the postgres store cases: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (install Debian's `postgresql`; with GATEHOUSE_TEST_REQUIRE_ALL or CI set they must run)\n"
                    .utf8))
        return false
    }()

    private var startup: Task<Instance, any Error>?
    private var counter = 0

    /// A URL of a new, empty database.
    func makeDatabase() async throws -> String {
        let port = try await start().port
        counter += 1
        let name = "gatehouse_test_\(counter)_\(UUID().uuidString.prefix(8).lowercased())"
        try await Self.offPool {
            try Self.run(
                Self.tool("psql"), ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", "postgres", "-q", "-c", "CREATE DATABASE \(name)"],
                asPostgres: false)
        }
        return "postgres://postgres@127.0.0.1:\(port)/\(name)?sslmode=disable"
    }

    /// Stops the server as an operator does (`pg_ctl stop -m fast`): sessions are ended, connections closed,
    /// and from then on connections are refused.
    func stop() async throws {
        let instance = try await start()
        try await Self.offPool {
            try Self.run(Self.tool("pg_ctl"), ["-D", instance.data, "-m", "fast", "-w", "-t", "30", "stop"], asPostgres: true)
        }
    }

    /// Starts the stopped server again, on the same port.
    func restart() async throws {
        let instance = try await start()
        try await Self.offPool { try Self.startServer(instance) }
    }

    /// Freezes the server (SIGSTOP to the postmaster, then to its backends): connections stay open, new ones
    /// are accepted by the kernel, and nothing answers. A host that became unreachable looks the same.
    func pause() async throws {
        let pid = try await postmasterPID()
        try await Self.offPool {
            try Self.run("/bin/sh", ["-c", "kill -STOP \(pid) && for p in $(pgrep -P \(pid)); do kill -STOP $p; done"], asPostgres: false)
        }
    }

    /// Lets a paused server go on (SIGCONT to its backends, then to the postmaster).
    func resume() async throws {
        let pid = try await postmasterPID()
        try await Self.offPool {
            try Self.run("/bin/sh", ["-c", "for p in $(pgrep -P \(pid)); do kill -CONT $p; done; kill -CONT \(pid)"], asPostgres: false)
        }
    }

    private func postmasterPID() async throws -> Int32 {
        let instance = try await start()
        let text = try String(contentsOfFile: instance.data + "/postmaster.pid", encoding: .utf8)
        guard let pid = text.split(separator: "\n").first.flatMap({ Int32($0) }) else { throw HarnessError("no postmaster.pid") }
        return pid
    }

    /// The running server; the first caller starts it, later ones (also while it starts) wait for it.
    private func start() async throws -> Instance {
        if let startup { return try await startup.value }
        let task = Task { try await Self.offPool { try Self.createServer() } }
        startup = task
        return try await task.value
    }

    /// Runs blocking work (child processes waited for with `waitpid`) on a thread of its own, so that it never
    /// holds one of the few threads that every test's tasks share.
    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    private static func createServer() throws -> Instance {
        guard Self.binDirectory != nil else { throw HarnessError("PostgreSQL is not installed (apt-get install postgresql)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-pg-\(UUID().uuidString)").path
        let data = directory + "/data"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try Self.run("/bin/chown", ["postgres:postgres", directory], asPostgres: false)
        }
        try Self.run(Self.tool("initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"], asPostgres: true)
        // TLS with a self-signed certificate, so the `sslmode`s can be shown to do what they say.
        try Self.run(
            Self.openssl,
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                "-keyout", data + "/server.key", "-out", data + "/server.crt",
            ],
            asPostgres: true)
        try Self.run("/bin/chmod", ["600", data + "/server.key"], asPostgres: true)
        let port = try Self.freePort()
        let options =
            "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300"
            + " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key"
        let instance = Instance(port: port, data: data, directory: directory, options: options)
        try startServer(instance)
        // Stop the server when this process ends, even on a crash (and let it go on first, should a test
        // have left it paused).
        let stop =
            "for p in $(pgrep -P $(head -1 \(data)/postmaster.pid 2>/dev/null) 2>/dev/null) $(head -1 \(data)/postmaster.pid 2>/dev/null); do kill -CONT $p; done 2>/dev/null; "
            + "\(Self.asPostgresPrefix())\(Self.tool("pg_ctl")) -D \(data) -m immediate stop >/dev/null 2>&1; rm -rf \(directory)"
        _ = try ChildProcess.start("/bin/sh", ["-c", "while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done; \(stop)"], stdout: nil, stderr: nil)
        return instance
    }

    private static func startServer(_ instance: Instance) throws {
        try Self.run(
            Self.tool("pg_ctl"), ["-D", instance.data, "-o", instance.options, "-l", instance.directory + "/log", "-w", "-t", "30", "start"],
            asPostgres: true)
    }

    private static func tool(_ name: String) -> String { "\(binDirectory ?? "/usr/bin")/\(name)" }

    private static let openssl = "/usr/bin/openssl"

    private static func asPostgresPrefix() -> String { getuid() == 0 ? "/usr/sbin/runuser -u postgres -- " : "" }

    /// Runs a command to completion with `posix_spawn`/`waitpid`, its output in a temporary file.
    ///
    /// Not `Foundation.Process`: on Linux its `waitUntilExit` can miss the exit of `runuser` here and wait forever,
    /// and a pipe could be held open by the server that `pg_ctl start` leaves running.
    private static func run(_ executable: String, _ arguments: [String], asPostgres: Bool) throws {
        let argv = asPostgres && getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-pg-output-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let status = try ChildProcess.wait(ChildProcess.start(argv[0], Array(argv.dropFirst()), stdout: outputPath, stderr: nil))
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw HarnessError("\(executable) failed (status \(status)): \(text)")
        }
    }

    /// A port free right now, bound to port 0 by NIO's bootstrap and released: not with a `sockaddr_in` filled in by
    /// hand, whose clang module (Glibc or NIO's CNIOLinux) varies between builds, so that member import visibility
    /// refuses its fields in some of them.
    private static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        guard let port = channel.localAddress?.port else { throw HarnessError("no free port") }
        return port
    }

    struct HarnessError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
