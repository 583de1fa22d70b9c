import GatehouseCore
import Synchronization

/// Identity and credential already decoded and unsealed, per session and credential version, so the
/// hot path does not decode JSON and run AES-GCM on every request. The store is still read on every
/// request (logout must take effect on every instance at once); only the opening is cached.
final class OpenedSessionCache: Sendable {
    private struct Entry {
        var version: Int
        var identity: Identity
        var credential: Credential
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func lookup(_ record: SessionRecord) -> (Identity, Credential)? {
        entries.withLock { entries in
            guard let entry = entries[record.id], entry.version == record.credentialVersion else { return nil }
            return (entry.identity, entry.credential)
        }
    }

    func store(_ session: ActiveSession) {
        entries.withLock { entries in
            // Crude bound: sessions come back into the cache on their next request.
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[session.id] = Entry(version: session.record.credentialVersion, identity: session.identity, credential: session.credential)
        }
    }

    func remove(_ sessionID: String) {
        _ = entries.withLock { $0.removeValue(forKey: sessionID) }
    }
}
