import Foundation
import Synchronization
import Testing

@testable import GatehouseStore

/// Group commit of one-time values: records that arrive during a write share the next one, and each caller
/// still gets its own answer.
@Suite struct OnceRecordBatcherTests {
    /// A write that takes a moment and remembers what it saw, like a store's.
    final class RecordingWrite: Sendable {
        let batches = Mutex<[[String]]>([])
        let seen = Mutex<Set<String>>([])

        func write(_ entries: [OnceRecordBatcher.Entry]) async throws -> [Bool] {
            try await Task.sleep(for: .milliseconds(5))
            batches.withLock { $0.append(entries.map(\.key)) }
            return seen.withLock { seen in entries.map { seen.insert($0.key).inserted } }
        }
    }

    struct Refused: Error {}

    @Test func concurrentRecordsShareWritesAndEachKeyWinsOnce() async throws {
        let write = RecordingWrite()
        let batcher = OnceRecordBatcher(maxBatch: 64) { try await write.write($0) }
        let now = Date()
        let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for index in 0..<400 {
                let key = "k\(index % 100)"
                group.addTask { (key, try await batcher.record(key, until: now.addingTimeInterval(60), now: now)) }
            }
            return try await group.reduce(into: [String: [Bool]]()) { $0[$1.0, default: []].append($1.1) }
        }
        #expect(results.count == 100)
        for (key, answers) in results {
            #expect(answers.filter { $0 }.count == 1, "\(key): \(answers)")
            #expect(answers.count == 4)
        }
        let batches = write.batches.withLock { $0 }
        #expect(batches.map(\.count).reduce(0, +) == 400)
        #expect(batches.count < 400, "records arriving during a write share the next one")
        #expect(batches.allSatisfy { $0.count <= 64 })
    }

    @Test func aFailedWriteFailsEveryRecordOfItsBatchAndTheNextBatchGoesOn() async throws {
        let failing = Mutex(true)
        let batcher = OnceRecordBatcher { entries in
            if failing.withLock({ $0 }) { throw Refused() }
            return entries.map { _ in true }
        }
        let now = Date()
        await #expect(throws: Refused.self) { try await batcher.record("a", until: now, now: now) }
        failing.withLock { $0 = false }
        #expect(try await batcher.record("b", until: now, now: now))
    }

    /// A write that answers through a completion from a thread of its own (as SQLite's writer queue does).
    @Test func handedOverRecordsAreAnsweredWithoutATaskEachAndEachKeyWinsOnce() async throws {
        let seen = Mutex<Set<String>>([])
        let batches = Mutex<[Int]>([])
        let queue = DispatchQueue(label: "writer")
        let batcher = OnceRecordBatcher(maxBatch: 16) { entries, done in
            queue.asyncAfter(deadline: .now() + .milliseconds(2)) {
                batches.withLock { $0.append(entries.count) }
                done(.success(seen.withLock { seen in entries.map { seen.insert($0.key).inserted } }))
            }
        }
        let now = Date()
        let answers = Mutex<[String: [Bool]]>([:])
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let left = Mutex(100)
            for index in 0..<100 {
                let key = "k\(index % 25)"
                batcher.record(key, until: now, now: now) { result in
                    answers.withLock { $0[key, default: []].append((try? result.get()) ?? false) }
                    if left.withLock({ left in
                        left -= 1
                        return left == 0
                    }) {
                        finished.resume()
                    }
                }
            }
        }
        let results = answers.withLock { $0 }
        #expect(results.count == 25)
        #expect(results.values.allSatisfy { $0.count == 4 && $0.filter { $0 }.count == 1 }, "\(results)")
        let sizes = batches.withLock { $0 }
        #expect(sizes.reduce(0, +) == 100 && sizes.allSatisfy { $0 <= 16 })
        #expect(sizes.count < 100, "records handed over during a write share the next one")
    }
}

extension OnceRecordBatcher {
    /// A batcher whose writes are awaited (one task per batch): what these tests write with.
    convenience init(maxBatch: Int = 256, write: @escaping @Sendable ([Entry]) async throws -> [Bool]) {
        self.init(maxBatch: maxBatch) { entries, done in
            Task {
                do {
                    done(.success(try await write(entries)))
                } catch {
                    done(.failure(error))
                }
            }
        }
    }
}
