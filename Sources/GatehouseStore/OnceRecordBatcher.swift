import Foundation
import Synchronization

/// Group commit for ``SessionStore/recordOnce(_:until:now:)``: the records that arrive while one write is
/// under way wait for the next, and go to the store together — one transaction (SQLite) or one statement
/// (PostgreSQL) for the lot instead of one per record. A DPoP-bound request records its proof's `jti` before
/// it may go on; under load, many of them share one write.
///
/// Each caller still gets its own answer, in arrival order: a key recorded twice in one batch is new for the
/// first caller and a replay for the second. A write that fails fails every record of its batch.
final class OnceRecordBatcher: Sendable {
    /// One record asked for.
    struct Entry: Sendable {
        let key: String
        let until: Date
        let now: Date
    }

    /// Writes the entries, in order; returns for each whether it was new (as `recordOnce` would).
    typealias Write = @Sendable ([Entry]) async throws -> [Bool]

    private struct Waiting {
        let entry: Entry
        let continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let state = Mutex(State())
    private let write: Write
    /// At most this many records per write, so one transaction stays short.
    private let maxBatch: Int

    init(maxBatch: Int = 256, write: @escaping Write) {
        self.maxBatch = maxBatch
        self.write = write
    }

    /// Whether `key` was new (or its earlier entry expired): see ``SessionStore/recordOnce(_:until:now:)``.
    func record(_ key: String, until: Date, now: Date) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let lead = state.withLock { state in
                state.waiting.append(Waiting(entry: Entry(key: key, until: until, now: now), continuation: continuation))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            // The first record of an idle batcher starts the writer; the others only wait for it.
            if lead { Task { await self.drain() } }
        }
    }

    /// Writes batches until nothing waits.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                guard !state.waiting.isEmpty else {
                    state.writing = false
                    return []
                }
                let taken = Array(state.waiting.prefix(maxBatch))
                state.waiting.removeFirst(taken.count)
                return taken
            }
            guard !batch.isEmpty else { return }
            do {
                let results = try await write(batch.map(\.entry))
                precondition(results.count == batch.count, "a batch write answers for each of its records")
                for (waiting, new) in zip(batch, results) { waiting.continuation.resume(returning: new) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
