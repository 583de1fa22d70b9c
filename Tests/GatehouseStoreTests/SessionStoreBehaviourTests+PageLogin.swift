import Foundation
import GatehouseCore
import GatehouseStore
import Testing

/// The page-login part of the ``SessionStore`` contract: a pending record read without being used, and its
/// payload replaced by compare-and-swap.
extension SessionStoreBehaviourTests {
    @Test(arguments: StoreFactory.allCases)
    func pendingRecordIsReadWithoutBeingUsedUntilConsumedOrExpired(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.pending(keyHash: "login", purpose: .pageLogin, expiresAt: Fixtures.at(60))
            try await store.insertPending(record)

            #expect(try await store.pendingRecord(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(1)) == record)
            #expect(try await store.pendingRecord(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(2)) == record)
            #expect(try await store.pendingRecord(keyHash: "login", purpose: .loginTransaction, now: Fixtures.at(2)) == nil)
            #expect(try await store.pendingRecord(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(60)) == nil)
            #expect(try await store.consumePending(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(3)) == .first(record))
            #expect(try await store.pendingRecord(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(4)) == nil)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func pendingPayloadIsReplacedOnlyWhileItIsStillTheExpectedOne(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.pending(keyHash: "login", purpose: .pageLogin, expiresAt: Fixtures.at(60))
            try await store.insertPending(record)
            let v1 = Data("v1".utf8)
            let v2 = Data("v2".utf8)

            #expect(
                try await store.replacePendingPayload(keyHash: "login", purpose: .pageLogin, expected: record.payload, with: v1, now: Fixtures.at(1)))
            #expect(
                try await store.replacePendingPayload(keyHash: "login", purpose: .pageLogin, expected: record.payload, with: v2, now: Fixtures.at(2))
                    == false)
            #expect(try await store.pendingRecord(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(2))?.payload == v1)
            #expect(
                try await store.replacePendingPayload(keyHash: "login", purpose: .handoffCode, expected: v1, with: v2, now: Fixtures.at(2)) == false)
            #expect(
                try await store.replacePendingPayload(keyHash: "login", purpose: .pageLogin, expected: v1, with: v2, now: Fixtures.at(60)) == false)
            // Concurrent writers on the same version: exactly one lands.
            let landed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await store.replacePendingPayload(
                            keyHash: "login", purpose: .pageLogin, expected: v1, with: Data("w\(index)".utf8), now: Fixtures.at(3))
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(landed == 1)
            _ = try await store.consumePending(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(4))
            let current = try #require(try await store.consumePending(keyHash: "login", purpose: .pageLogin, now: Fixtures.at(5)).replayedPayload)
            #expect(
                try await store.replacePendingPayload(keyHash: "login", purpose: .pageLogin, expected: current, with: v2, now: Fixtures.at(5))
                    == false, "not after its end")
        }
    }
}

extension Consumption {
    fileprivate var replayedPayload: Data? {
        if case .replayed(let record) = self { return record.payload }
        return nil
    }
}
