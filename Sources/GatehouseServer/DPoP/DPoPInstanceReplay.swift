import Foundation
import Synchronization

/// The `replay: instance` record of accepted proofs: this process's ``DPoPReplaySet``, shared by every event
/// loop. A record is a lock and a set insertion, made on the caller's thread.
final class DPoPInstanceReplay: Sendable {
    private let records: Mutex<DPoPReplaySet>

    init(window: TimeInterval, now: Date) {
        records = Mutex(DPoPReplaySet(window: window, now: now))
    }

    /// Records `key`; `false` when this process recorded it before.
    func record(_ key: DPoPReplayKey, now: Date) -> Bool {
        records.withLock { $0.record(key, now: now) }
    }

    /// How many records are kept.
    var count: Int { records.withLock { $0.count } }
}
