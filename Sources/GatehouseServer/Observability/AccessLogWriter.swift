import Dispatch
import Foundation
import Glibc
import Synchronization

/// Writes access-log lines off the event loop, in batches, as nginx buffers its access log: a request's
/// answer only appends an ``AccessLogRecord`` to a list under a lock; a thread of the writer's own wakes on
/// the first record of a batch, waits a few milliseconds for more, renders them all and writes them to
/// standard error with one `write(2)`. The thread ends after a few idle seconds and starts again with the
/// next record, so an idle gateway has none.
///
/// What is appended is written within ``gatherDelay`` (and by ``flush()`` at shutdown); a process that is
/// killed loses at most that much.
final class AccessLogWriter: Sendable {
    private struct State {
        var pending: [AccessLogRecord] = []
        var threadRunning = false
    }

    let format: LogLineFormat
    /// The logger's label (`gatehouse`) and the source module, as the process's other lines carry them.
    let label: String
    let source: String
    private let descriptor: Int32
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// How long the thread waits for more lines once one arrived.
    private static let gatherDelay: useconds_t = 10_000
    /// How long an idle thread stays.
    private static let idleLifetime: DispatchTimeInterval = .seconds(3)

    init(format: LogLineFormat, label: String, source: String = "GatehouseServer", descriptor: Int32 = STDERR_FILENO) {
        self.format = format
        self.label = label
        self.source = source
        self.descriptor = descriptor
    }

    /// Keeps `record` for the next batch. Cheap: a lock, an append and, for a batch's first record, a wake-up.
    func append(_ record: AccessLogRecord) {
        let (first, startThread) = state.withLock { state -> (Bool, Bool) in
            state.pending.append(record)
            guard !state.threadRunning else { return (state.pending.count == 1, false) }
            state.threadRunning = true
            return (false, true)
        }
        if startThread {
            let thread = Thread { [self] in run() }
            thread.name = "access-log"
            thread.start()
        } else if first {
            wake.signal()
        }
    }

    /// Writes what is pending now, on the caller's thread (at shutdown).
    func flush() {
        write(takePending())
    }

    /// The records not yet written, taken out of the list.
    private func takePending() -> [AccessLogRecord] {
        state.withLock { state in
            defer { state.pending = [] }
            return state.pending
        }
    }

    private func run() {
        while true {
            usleep(Self.gatherDelay)
            write(takePending())
            if wake.wait(timeout: .now() + Self.idleLifetime) == .timedOut {
                let idle = state.withLock { state in
                    if state.pending.isEmpty { state.threadRunning = false }
                    return !state.threadRunning
                }
                if idle { return }
            }
        }
    }

    private func write(_ batch: [AccessLogRecord]) {
        guard !batch.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(batch.count * 200)
        for record in batch {
            format.render(
                time: record.time, level: "info", label: label, source: source, message: "request", fields: record.fields, into: &bytes)
        }
        LogOutput.write(bytes, to: descriptor)
    }
}
