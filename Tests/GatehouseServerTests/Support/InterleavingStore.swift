import Foundation
import GatehouseCore
import GatehouseStore

/// A memory store whose page-login reads wait a moment after reading, so that two concurrent
/// read-modify-writes both read before either writes: the interleaving that loses an update without
/// compare-and-swap.
final class InterleavingStore: ForwardingSessionStore {
    let base = MemorySessionStore()
    let readDelay: Duration

    init(readDelay: Duration = .milliseconds(30)) {
        self.readDelay = readDelay
    }

    var forwardee: any SessionStore { base }

    func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord? {
        let record = try await base.pendingRecord(keyHash: keyHash, purpose: purpose, now: now)
        try await Task.sleep(for: readDelay)
        return record
    }
}
