import Foundation
import GatehouseCore

/// Device sign-ins in the session store (``DeviceAuthorization``), shared by every instance: created by the
/// authorize call, found by user code on the page, approved or denied by the person, polled and finally
/// consumed by the device.
///
/// Two ``PendingRecord``s per sign-in, both keyed by hashes only: the sign-in itself under the SHA-256 of the
/// device code (purpose `device`), and the user code under ``UserCode/hash(_:)`` (purpose `device_user`),
/// whose payload is the device code's hash. The sign-in's record outlives the code by one more lifetime, so
/// that a late poll learns `expired_token` rather than `invalid_grant`.
struct DeviceAuthorizations: Sendable {
    let store: any SessionStore
    let sealer: CredentialSealer
    let clock: TimeSource

    /// A new sign-in: its device code and user code (displayed form), which exist nowhere else.
    func create(_ authorization: DeviceAuthorization, deviceCode: String, userCode: String, lifetime: TimeInterval) async throws {
        let deviceHash = RandomToken.hash(deviceCode)
        try await store.insertPending(
            PendingRecord(
                keyHash: deviceHash, purpose: .deviceAuthorization, provider: authorization.provider ?? "",
                payload: try sealer.seal(json: authorization), expiresAt: authorization.expiresAt.addingTimeInterval(lifetime)))
        try await store.insertPending(
            PendingRecord(
                keyHash: authorization.userCodeHash, purpose: .deviceUserCode, provider: authorization.provider ?? "",
                payload: Data(deviceHash.utf8), expiresAt: authorization.expiresAt))
    }

    /// The device code's hash and its sign-in for a typed user code (already normalized); nil when unknown or expired.
    func find(userCode normalized: String) async throws -> (deviceHash: String, authorization: DeviceAuthorization)? {
        let now = clock.now()
        guard let pointer = try await store.pendingRecord(keyHash: UserCode.hash(normalized), purpose: .deviceUserCode, now: now),
            let deviceHash = String(data: pointer.payload, encoding: .utf8),
            let found = try await authorization(deviceHash: deviceHash)
        else { return nil }
        return found.authorization.isExpired(at: now) ? nil : (deviceHash, found.authorization)
    }

    /// The sign-in under a device code's hash, with the sealed bytes a change must compare against.
    func authorization(deviceHash: String) async throws -> (authorization: DeviceAuthorization, sealed: Data)? {
        guard let record = try await store.pendingRecord(keyHash: deviceHash, purpose: .deviceAuthorization, now: clock.now()) else { return nil }
        return (try sealer.open(json: DeviceAuthorization.self, from: record.payload), record.payload)
    }

    /// Applies `change` to the stored sign-in (compare-and-swap, retried when another instance wrote in
    /// between) and returns what `change` returned; nil when the sign-in is gone (unknown, used or past its record's end).
    func update<T: Sendable>(deviceHash: String, _ change: (inout DeviceAuthorization) -> T) async throws -> T? {
        for _ in 0..<8 {
            guard let found = try await authorization(deviceHash: deviceHash) else { return nil }
            let (current, sealed) = found
            var changed = current
            let outcome = change(&changed)
            if changed == current { return outcome }
            if try await store.replacePendingPayload(
                keyHash: deviceHash, purpose: .deviceAuthorization, expected: sealed, with: try sealer.seal(json: changed), now: clock.now())
            {
                return outcome
            }
        }
        throw GatehouseError.storeUnavailable("The device sign-in kept changing under this request; try again.")
    }

    /// Takes an approved sign-in, once: true for the one caller that may create its session, on any instance.
    func consume(deviceHash: String) async throws -> Bool {
        if case .first = try await store.consumePending(keyHash: deviceHash, purpose: .deviceAuthorization, now: clock.now()) { return true }
        return false
    }
}
