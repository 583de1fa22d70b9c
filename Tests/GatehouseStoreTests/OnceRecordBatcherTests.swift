import Foundation
@testable import GatehouseStore
import Synchronization
import Testing

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
}
