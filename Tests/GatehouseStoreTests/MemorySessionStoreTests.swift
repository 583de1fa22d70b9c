import Foundation
import GatehouseStore
import Synchronization
import Testing

@Suite("Memory store")
struct MemorySessionStoreTests {
    /// An event loop hands a DPoP proof's record over with a completion: the memory store answers it on the
    /// caller's thread before returning (no task, no hop), and answers as the `async` form does.
    @Test("recordOnce with a completion answers before it returns: new, replay, new again once expired")
    func recordOnceAnswersInPlace() async throws {
        let store = MemorySessionStore()
        let now = Date(timeIntervalSince1970: 1_000_000)
        let answers = Mutex<[Bool]>([])
        func record(_ key: String, until: Date, at time: Date) {
            store.recordOnce(key, until: until, now: time) { result in
                answers.withLock { $0.append((try? result.get()) ?? false) }
            }
        }
        record("dpop k j1", until: now + 60, at: now)
        #expect(answers.withLock { $0 } == [true])
        record("dpop k j1", until: now + 60, at: now + 1)
        record("dpop k j2", until: now + 60, at: now + 1)
        #expect(answers.withLock { $0 } == [true, false, true])
        // Past its expiry the same key is new again, and the async form sees the same values.
        record("dpop k j1", until: now + 200, at: now + 61)
        #expect(answers.withLock { $0 } == [true, false, true, true])
        #expect(try await store.recordOnce("dpop k j1", until: now + 200, now: now + 62) == false)
        #expect(try await store.recordOnce("dpop k j3", until: now + 200, now: now + 62) == true)
    }
}
