import Foundation
import GatehouseCore
import GatehouseStore

/// A memory store whose `session(tokenHash:)` waits, once started, until the test releases it.
final class SlowStore: ForwardingSessionStore {
    private let base: MemorySessionStore
    private let reading: AsyncStream<Void>
    private let readingSignal: AsyncStream<Void>.Continuation
    private let gate: AsyncStream<Void>
    private let gateSignal: AsyncStream<Void>.Continuation

    init(base: MemorySessionStore) {
        self.base = base
        (reading, readingSignal) = AsyncStream<Void>.makeStream()
        (gate, gateSignal) = AsyncStream<Void>.makeStream()
    }

    /// Returns once a read has begun.
    func waitUntilReading() async {
        for await _ in reading { return }
    }

    /// Lets the waiting read finish.
    func release() { gateSignal.finish() }

    var forwardee: any SessionStore { base }

    func session(tokenHash: String) async throws -> SessionRecord? {
        let record = try await base.session(tokenHash: tokenHash)
        readingSignal.yield()
        for await _ in gate {}
        return record
    }
}
