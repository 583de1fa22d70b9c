import Foundation
import GatehouseCore
import GatehouseStore
import Tracing

/// The session store with every operation timed and its failures counted
/// (`gatehouse_store_operation_duration_seconds{operation}`, `gatehouse_store_errors_total{operation}`).
/// It sits directly on the configured store, below the session cache, so it measures the database, not
/// the cache's answers from memory.
///
/// Its outages are logged by ``StoreOutageReporter``: a line when it goes down, a summary at most every 10 s, a
/// line when it is back; not one line per refused request.
final class InstrumentedSessionStore: ForwardingSessionStore {
    let base: any SessionStore
    private let metrics: GatewayMetrics
    private let outages: StoreOutageReporter?

    /// - Parameters:
    ///   - base: the configured store.
    ///   - metrics: where operations are timed and failures counted.
    ///   - outages: where the store's outages are logged; nil: not logged here.
    init(base: any SessionStore, metrics: GatewayMetrics, outages: StoreOutageReporter? = nil) {
        self.base = base
        self.metrics = metrics
        self.outages = outages
    }

    var forwardee: any SessionStore { base }

    private func measured<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        // A span of the traced request it is made for, if any.
        try await GatewayTracing.withSpan("store " + operation, ofKind: .client) { span in
            span?.attributes["db.operation.name"] = operation
            return try await timed(operation, body)
        }
    }

    private func timed<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        do {
            let value = try await body()
            finished(operation, started: started, error: nil)
            return value
        } catch {
            finished(operation, started: started, error: error)
            throw error
        }
    }

    /// A call made at `started` has ended: its duration in the metrics, and what it says of the store's
    /// availability. A failure because the store is unavailable joins its outage; any other outcome means it answered.
    private func finished(_ operation: String, started: ContinuousClock.Instant, error: (any Error)?) {
        metrics.storeOperation(operation, duration: ContinuousClock.now - started, failed: error != nil)
        switch error {
        case let unavailable as StoreUnavailableError: outages?.refused(unavailable)
        case is CancellationError: break
        default: outages?.answered(started: started)
        }
    }

    func insertSession(_ record: SessionRecord) async throws {
        try await measured("insert_session") { try await base.insertSession(record) }
    }

    func session(tokenHash: String) async throws -> SessionRecord? {
        try await measured("session_by_token") { try await base.session(tokenHash: tokenHash) }
    }

    func session(id: String) async throws -> SessionRecord? {
        try await measured("session_by_id") { try await base.session(id: id) }
    }

    func updateCredential(sessionID: String, sealedCredential: Data, expectedVersion: Int) async throws -> Bool {
        try await measured("update_credential") {
            try await base.updateCredential(sessionID: sessionID, sealedCredential: sealedCredential, expectedVersion: expectedVersion)
        }
    }

    func touchSession(id: String, at date: Date) async throws {
        try await measured("touch_session") { try await base.touchSession(id: id, at: date) }
    }

    func deleteSession(id: String) async throws {
        try await measured("delete_session") { try await base.deleteSession(id: id) }
    }

    func deleteExpired(now: Date, idleCutoff: Date) async throws -> Int {
        try await measured("delete_expired") { try await base.deleteExpired(now: now, idleCutoff: idleCutoff) }
    }

    func insertPending(_ record: PendingRecord) async throws {
        try await measured("insert_pending") { try await base.insertPending(record) }
    }

    func consumePending(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> Consumption {
        try await measured("consume_pending") { try await base.consumePending(keyHash: keyHash, purpose: purpose, now: now) }
    }

    func pendingRecord(keyHash: String, purpose: PendingRecord.Purpose, now: Date) async throws -> PendingRecord? {
        try await measured("read_pending") { try await base.pendingRecord(keyHash: keyHash, purpose: purpose, now: now) }
    }

    func replacePendingPayload(keyHash: String, purpose: PendingRecord.Purpose, expected: Data, with payload: Data, now: Date) async throws -> Bool {
        try await measured("replace_pending") {
            try await base.replacePendingPayload(keyHash: keyHash, purpose: purpose, expected: expected, with: payload, now: now)
        }
    }

    func attachSession(_ sessionID: String, toPending keyHash: String) async throws {
        try await measured("attach_session") { try await base.attachSession(sessionID, toPending: keyHash) }
    }

    func acquireRefreshLease(sessionID: String, owner: String, until: Date, now: Date) async throws -> Bool {
        try await measured("acquire_refresh_lease") { try await base.acquireRefreshLease(sessionID: sessionID, owner: owner, until: until, now: now) }
    }

    func releaseRefreshLease(sessionID: String, owner: String) async throws {
        try await measured("release_refresh_lease") { try await base.releaseRefreshLease(sessionID: sessionID, owner: owner) }
    }

    func recordOnce(_ key: String, until: Date, now: Date) async throws -> Bool {
        try await measured("record_once") { try await base.recordOnce(key, until: until, now: now) }
    }

    func recordOnce(_ key: String, until: Date, now: Date, completion: @escaping @Sendable (Result<Bool, any Error>) -> Void) {
        let started = ContinuousClock.now
        base.recordOnce(key, until: until, now: now) { result in
            let error: (any Error)? = if case .failure(let error) = result { error } else { nil }
            self.finished("record_once", started: started, error: error)
            completion(result)
        }
    }
}
