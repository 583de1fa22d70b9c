import Foundation
import GatehouseCore

/// The state behind ``CachingSessionStore``: sessions by token hash, each kept until a deadline, and what
/// makes a cached copy trustworthy.
///
/// A copy may be served only while the cache is *synchronized* (the change feed is listening, so every end
/// or change elsewhere evicts it). The *epoch* counts evictions: a store read that began before an eviction
/// must not put its possibly stale result into the cache afterwards.
struct SessionCache: Sendable {
    private struct Entry: Sendable {
        var record: SessionRecord
        var until: Date
    }

    private var entries: [String: Entry] = [:]
    private var tokenHashByID: [String: String] = [:]
    private(set) var epoch: UInt64 = 0
    private(set) var isSynchronized = false
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The cached session for `tokenHash`, if synchronized and not past its deadline.
    func record(tokenHash: String, now: Date) -> SessionRecord? {
        guard isSynchronized, let entry = entries[tokenHash], entry.until > now else { return nil }
        return entry.record
    }

    /// Keeps `record` until `until`, unless an eviction happened since `epoch` was read or the feed is down.
    mutating func insert(_ record: SessionRecord, until: Date, readAt epoch: UInt64) {
        guard isSynchronized, epoch == self.epoch else { return }
        if entries.count >= capacity {
            // Rare (capacity is far above the active sessions of one instance): start over rather than track age.
            entries.removeAll(keepingCapacity: true)
            tokenHashByID.removeAll(keepingCapacity: true)
        }
        entries[record.tokenHash] = Entry(record: record, until: until)
        tokenHashByID[record.id] = record.tokenHash
    }

    /// Forgets one session (changed or ended here or on another instance).
    mutating func evict(sessionID: String) {
        epoch &+= 1
        if let tokenHash = tokenHashByID.removeValue(forKey: sessionID) {
            entries[tokenHash] = nil
        }
    }

    /// Forgets every session (something changed elsewhere, and the feed cannot say what).
    mutating func evictAll() {
        epoch &+= 1
        entries.removeAll(keepingCapacity: true)
        tokenHashByID.removeAll(keepingCapacity: true)
    }

    /// Records this instance's own activity on a cached copy (the idle timeout reads `lastSeenAt`).
    mutating func touch(sessionID: String, at date: Date) {
        guard let tokenHash = tokenHashByID[sessionID] else { return }
        entries[tokenHash]?.record.lastSeenAt = date
    }

    /// Starts or stops serving copies. Either way everything cached so far is dropped: while the feed was
    /// down, changes may have gone unseen.
    mutating func setSynchronized(_ synchronized: Bool) {
        epoch &+= 1
        isSynchronized = synchronized
        entries.removeAll()
        tokenHashByID.removeAll()
    }

    /// How many sessions are cached.
    var count: Int { entries.count }
}
