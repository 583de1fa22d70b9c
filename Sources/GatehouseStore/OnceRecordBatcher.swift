import Foundation
import Synchronization

/// Group commit for ``SessionStore/recordOnce(_:until:now:)``: the records that arrive while one write is
/// under way wait for the next, and go to the store together — one transaction (SQLite) or one statement
/// (PostgreSQL) for the lot instead of one per record. A DPoP-bound request records its proof's `jti` before
/// it may go on; under load, many of them share one write.
///
/// Each caller still gets its own answer, in arrival order: a key recorded twice in one batch is new for the
/// first caller and a replay for the second. A write that fails fails every record of its batch.
///
/// A caller on an event loop hands its record over with a completion (``record(_:until:now:completion:)``):
/// no task per record; the answer comes on the thread that finished the write.
final class OnceRecordBatcher: Sendable {
    /// One record asked for.
    struct Entry: Sendable {
        let key: String
        let until: Date
        let now: Date
    }

    /// Writes the entries, in order, and answers for each whether it was new (as `recordOnce` would) through
    /// `done` (exactly once, on any thread).
    typealias HandedWrite = @Sendable (_ entries: [Entry], _ done: @escaping @Sendable (Result<[Bool], any Error>) -> Void) -> Void
    /// Where a record's answer goes.
    typealias Completion = @Sendable (Result<Bool, any Error>) -> Void

    private struct Waiting {
        let entry: Entry
        let completion: Completion
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let state = Mutex(State())
    private let write: HandedWrite
    /// At most this many records per write, so one transaction stays short.
    private let maxBatch: Int

    /// A batcher whose writes answer through a completion (a store with a callback API: no task per batch).
    init(maxBatch: Int = 256, handedWrite: @escaping HandedWrite) {
        self.maxBatch = maxBatch
        self.write = handedWrite
    }

    /// Whether `key` was new (or its earlier entry expired): see ``SessionStore/recordOnce(_:until:now:)``.
    func record(_ key: String, until: Date, now: Date) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            record(key, until: until, now: now) { continuation.resume(with: $0) }
        }
    }

    /// The same, answered through `completion` (exactly once, on the thread that finished the write).
    func record(_ key: String, until: Date, now: Date, completion: @escaping Completion) {
        let lead = state.withLock { state in
            state.waiting.append(Waiting(entry: Entry(key: key, until: until, now: now), completion: completion))
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        // The first record of an idle batcher starts the writer; the others only wait for it.
        if lead { writeNext() }
    }

    /// Writes the next batch, and after it the one after, until nothing waits.
    private func writeNext() {
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
        write(batch.map(\.entry)) { result in
            switch result {
            case .success(let results):
                precondition(results.count == batch.count, "a batch write answers for each of its records")
                for (waiting, new) in zip(batch, results) { waiting.completion(.success(new)) }
            case .failure(let error):
                for waiting in batch { waiting.completion(.failure(error)) }
            }
            self.writeNext()
        }
    }
}
