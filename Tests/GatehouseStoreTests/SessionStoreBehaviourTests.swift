import Foundation
import GatehouseCore
import GatehouseStore
import Testing

/// The ``SessionStore`` contract, run against every store.
@Suite struct SessionStoreBehaviourTests {
    // MARK: One-time values (DPoP jti)

    @Test(arguments: StoreFactory.allCases)
    func aOneTimeValueIsRecordedOnceUntilItExpiresAndIsSweptAfter(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let now = Fixtures.t0
            #expect(try await store.recordOnce("dpop k j1", until: now.addingTimeInterval(60), now: now))
            #expect(try await store.recordOnce("dpop k j1", until: now.addingTimeInterval(60), now: now.addingTimeInterval(30)) == false)
            #expect(try await store.recordOnce("dpop k j2", until: now.addingTimeInterval(60), now: now))
            // Past its expiry the value may be recorded again (its proof's iat no longer passes anyway).
            #expect(try await store.recordOnce("dpop k j1", until: now.addingTimeInterval(200), now: now.addingTimeInterval(61)))
            #expect(try await store.recordOnce("dpop k j1", until: now.addingTimeInterval(200), now: now.addingTimeInterval(62)) == false)
            // Concurrent first uses: exactly one wins.
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await store.recordOnce("dpop k race", until: now.addingTimeInterval(60), now: now) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            // Many keys at once, each several times (writes shared by concurrent records): one win per key.
            let perKey = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for index in 0..<120 {
                    group.addTask {
                        (index % 30, try await store.recordOnce("dpop k many-\(index % 30)", until: now.addingTimeInterval(60), now: now))
                    }
                }
                return try await group.reduce(into: [Int: Int]()) { $0[$1.0, default: 0] += $1.1 ? 1 : 0 }
            }
            #expect(perKey.count == 30 && perKey.values.allSatisfy { $0 == 1 }, "\(perKey)")
            _ = try await store.deleteExpired(now: now.addingTimeInterval(300), idleCutoff: now)
            #expect(try await store.recordOnce("dpop k race", until: now.addingTimeInterval(400), now: now.addingTimeInterval(300)))
        }
    }

    /// The handed-over form (an event loop's, no task per record) is the same record: a value recorded one
    /// way is a replay the other way, and concurrent first uses still have one winner.
    @Test(arguments: StoreFactory.allCases)
    func aOneTimeValueHandedOverIsRecordedOnceWhicheverWayItComesAgain(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let now = Fixtures.t0
            @Sendable func handed(_ key: String) async throws -> Bool {
                try await withCheckedThrowingContinuation { continuation in
                    store.recordOnce(key, until: now.addingTimeInterval(60), now: now) { continuation.resume(with: $0) }
                }
            }
            #expect(try await handed("dpop k h1"))
            #expect(try await handed("dpop k h1") == false)
            #expect(try await store.recordOnce("dpop k h1", until: now.addingTimeInterval(60), now: now) == false)
            #expect(try await store.recordOnce("dpop k h2", until: now.addingTimeInterval(60), now: now))
            #expect(try await handed("dpop k h2") == false)
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        index % 2 == 0
                            ? try await handed("dpop k handed-race")
                            : try await store.recordOnce("dpop k handed-race", until: now.addingTimeInterval(60), now: now)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }

    // MARK: Sessions

    @Test(arguments: StoreFactory.allCases)
    func insertedSessionIsFoundByTokenHashAndByID(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.session(id: "s1")
            try await store.insertSession(record)

            #expect(try await store.session(tokenHash: record.tokenHash) == record)
            #expect(try await store.session(id: "s1") == record)
            #expect(try await store.session(tokenHash: "unknown") == nil)
            #expect(try await store.session(id: "unknown") == nil)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func insertingADuplicateIDOrTokenHashThrows(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertSession(Fixtures.session(id: "s1", tokenHash: "h1"))

            await #expect(throws: SessionStoreError.duplicateSession) {
                try await store.insertSession(Fixtures.session(id: "s1", tokenHash: "h2"))
            }
            await #expect(throws: SessionStoreError.duplicateSession) {
                try await store.insertSession(Fixtures.session(id: "s2", tokenHash: "h1"))
            }
            #expect(try await store.session(id: "s2") == nil)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func credentialUpdateSucceedsOnceAndFailsWithAStaleVersion(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertSession(Fixtures.session(id: "s1"))
            let refreshed = Data("refreshed".utf8)

            #expect(try await store.updateCredential(sessionID: "s1", sealedCredential: refreshed, expectedVersion: 1))
            #expect(try await store.updateCredential(sessionID: "s1", sealedCredential: Data("stale".utf8), expectedVersion: 1) == false)
            #expect(try await store.updateCredential(sessionID: "unknown", sealedCredential: refreshed, expectedVersion: 1) == false)

            let stored = try #require(try await store.session(id: "s1"))
            #expect(stored.sealedCredential == refreshed)
            #expect(stored.credentialVersion == 2)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func concurrentCredentialUpdatesOnTheSameVersionLandOnce(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertSession(Fixtures.session(id: "s1"))

            let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        try await store.updateCredential(sessionID: "s1", sealedCredential: Data([UInt8(index)]), expectedVersion: 1)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }

            #expect(successes == 1)
            #expect(try await store.session(id: "s1")?.credentialVersion == 2)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func touchChangesLastSeen(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.session(id: "s1")
            try await store.insertSession(record)

            try await store.touchSession(id: "s1", at: Fixtures.at(90.5))

            let stored = try #require(try await store.session(tokenHash: record.tokenHash))
            #expect(stored.lastSeenAt == Fixtures.at(90.5))
            #expect(stored.createdAt == record.createdAt)
            #expect(stored.expiresAt == record.expiresAt)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func deletedSessionIsGoneAndItsLeaseFreed(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.session(id: "s1")
            try await store.insertSession(record)
            try await store.insertSession(Fixtures.session(id: "s2"))
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(30), now: Fixtures.t0))

            try await store.deleteSession(id: "s1")
            try await store.deleteSession(id: "unknown")

            #expect(try await store.session(id: "s1") == nil)
            #expect(try await store.session(tokenHash: record.tokenHash) == nil)
            #expect(try await store.session(id: "s2") != nil)
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(30), now: Fixtures.t0))
        }
    }

    // MARK: Expiry sweep

    @Test(arguments: StoreFactory.allCases)
    func deleteExpiredRemovesSessionsPastTheirAbsoluteEnd(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertSession(Fixtures.session(id: "ended", lastSeenAt: Fixtures.at(99), expiresAt: Fixtures.at(100)))
            try await store.insertSession(Fixtures.session(id: "endsNow", lastSeenAt: Fixtures.at(99), expiresAt: Fixtures.at(101)))
            try await store.insertSession(Fixtures.session(id: "live", lastSeenAt: Fixtures.at(99), expiresAt: Fixtures.at(1_000)))

            let removed = try await store.deleteExpired(now: Fixtures.at(101), idleCutoff: Fixtures.t0)

            #expect(removed == 1)
            #expect(try await store.session(id: "ended") == nil)
            #expect(try await store.session(id: "endsNow") != nil)
            #expect(try await store.session(id: "live") != nil)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func concurrentSweepsRemoveEachExpiredSessionOnceAndNeverFail(_ factory: StoreFactory) async throws {
        // Every instance runs a sweeper: overlapping sweeps must neither fail nor count a row twice.
        try await factory.withStore { store throws in
            for index in 0..<40 {
                try await store.insertSession(Fixtures.session(id: "ended-\(index)", lastSeenAt: Fixtures.at(99), expiresAt: Fixtures.at(100)))
            }
            try await store.insertSession(Fixtures.session(id: "live", lastSeenAt: Fixtures.at(99), expiresAt: Fixtures.at(1_000)))

            let removed = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await store.deleteExpired(now: Fixtures.at(101), idleCutoff: Fixtures.t0) }
                }
                return try await group.reduce(0, +)
            }

            #expect(removed == 40)
            #expect(try await store.session(id: "ended-0") == nil)
            #expect(try await store.session(id: "live") != nil)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func deleteExpiredRemovesSessionsIdleSinceBeforeTheCutoff(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertSession(Fixtures.session(id: "idle", lastSeenAt: Fixtures.at(10)))
            try await store.insertSession(Fixtures.session(id: "active", lastSeenAt: Fixtures.at(10)))
            try await store.touchSession(id: "active", at: Fixtures.at(50))

            let removed = try await store.deleteExpired(now: Fixtures.at(60), idleCutoff: Fixtures.at(20))

            #expect(removed == 1)
            #expect(try await store.session(id: "idle") == nil)
            #expect(try await store.session(tokenHash: "hash-of-idle") == nil)
            #expect(try await store.session(id: "active") != nil)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func deleteExpiredPurgesExpiredPendingRecords(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertPending(Fixtures.pending(keyHash: "old", expiresAt: Fixtures.at(10)))
            try await store.insertPending(Fixtures.pending(keyHash: "fresh", expiresAt: Fixtures.at(100)))

            let removed = try await store.deleteExpired(now: Fixtures.at(50), idleCutoff: Fixtures.t0)
            #expect(removed == 0)

            // Re-inserting the purged key works; the fresh one is still there (a duplicate).
            try await store.insertPending(Fixtures.pending(keyHash: "old", expiresAt: Fixtures.at(100)))
            await #expect(throws: SessionStoreError.duplicatePending) {
                try await store.insertPending(Fixtures.pending(keyHash: "fresh", expiresAt: Fixtures.at(100)))
            }
            guard case .first = try await store.consumePending(keyHash: "old", purpose: .handoffCode, now: Fixtures.at(50)) else {
                Issue.record("the re-inserted record should be unconsumed")
                return
            }
        }
    }

    // MARK: Pending records

    @Test(arguments: StoreFactory.allCases)
    func pendingRecordIsConsumedOnceThenReplayed(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.pending()
            try await store.insertPending(record)

            #expect(try await store.consumePending(keyHash: record.keyHash, purpose: .handoffCode, now: Fixtures.at(1)) == .first(record))
            #expect(try await store.consumePending(keyHash: record.keyHash, purpose: .handoffCode, now: Fixtures.at(2)) == .replayed(record))
            #expect(try await store.consumePending(keyHash: record.keyHash, purpose: .handoffCode, now: Fixtures.at(3)) == .replayed(record))
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func pendingRecordOfAnotherPurposeOrUnknownKeyIsUnknown(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.pending(keyHash: "state-hash", purpose: .loginTransaction)
            try await store.insertPending(record)

            #expect(try await store.consumePending(keyHash: "state-hash", purpose: .handoffCode, now: Fixtures.at(1)) == .unknown)
            #expect(try await store.consumePending(keyHash: "other", purpose: .loginTransaction, now: Fixtures.at(1)) == .unknown)
            // The wrong-purpose attempt did not use it up.
            #expect(try await store.consumePending(keyHash: "state-hash", purpose: .loginTransaction, now: Fixtures.at(1)) == .first(record))
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func expiredPendingRecordIsUnknown(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertPending(Fixtures.pending(keyHash: "a", expiresAt: Fixtures.at(60)))
            try await store.insertPending(Fixtures.pending(keyHash: "b", expiresAt: Fixtures.at(60)))

            #expect(try await store.consumePending(keyHash: "a", purpose: .handoffCode, now: Fixtures.at(60)) == .unknown)
            #expect(try await store.consumePending(keyHash: "b", purpose: .handoffCode, now: Fixtures.at(61)) == .unknown)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func attachedSessionShowsOnReplay(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let record = Fixtures.pending()
            try await store.insertPending(record)

            let first = try await store.consumePending(keyHash: record.keyHash, purpose: .handoffCode, now: Fixtures.at(1))
            #expect(first == .first(record))
            try await store.attachSession("s1", toPending: record.keyHash)

            let replay = try await store.consumePending(keyHash: record.keyHash, purpose: .handoffCode, now: Fixtures.at(2))
            guard case .replayed(let replayed) = replay else {
                Issue.record("the second redemption should be .replayed")
                return
            }
            #expect(replayed.sessionID == "s1")
            #expect(replayed.payload == record.payload)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func concurrentConsumeFromTwentyTasksYieldsExactlyOneFirst(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.insertPending(Fixtures.pending())

            let results = try await withThrowingTaskGroup(of: Consumption.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await store.consumePending(keyHash: "code-hash", purpose: .handoffCode, now: Fixtures.at(1)) }
                }
                return try await group.reduce(into: [Consumption]()) { $0.append($1) }
            }

            #expect(results.count { if case .first = $0 { true } else { false } } == 1)
            #expect(results.count { if case .replayed = $0 { true } else { false } } == 19)
        }
    }

    // MARK: Refresh leases

    @Test(arguments: StoreFactory.allCases)
    func secondOwnerIsRefusedTheLeaseUntilItExpires(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(30), now: Fixtures.t0))

            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(40), now: Fixtures.at(10)) == false)
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(40), now: Fixtures.at(29)) == false)
            // Another session's lease is independent.
            #expect(try await store.acquireRefreshLease(sessionID: "s2", owner: "b", until: Fixtures.at(40), now: Fixtures.at(10)))
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(60), now: Fixtures.at(30)))
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(70), now: Fixtures.at(31)) == false)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func sameOwnerMayRetakeItsLease(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(30), now: Fixtures.t0))
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(60), now: Fixtures.at(10)))
            // The re-take extended it: still held at 45.
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(90), now: Fixtures.at(45)) == false)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func releaseFreesTheLeaseOnlyForItsOwner(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "a", until: Fixtures.at(30), now: Fixtures.t0))

            try await store.releaseRefreshLease(sessionID: "s1", owner: "b")
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(30), now: Fixtures.at(1)) == false)

            try await store.releaseRefreshLease(sessionID: "s1", owner: "a")
            #expect(try await store.acquireRefreshLease(sessionID: "s1", owner: "b", until: Fixtures.at(30), now: Fixtures.at(1)))
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func concurrentLeaseRequestsFromManyOwnersGrantOne(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        try await store.acquireRefreshLease(sessionID: "s1", owner: "owner-\(index)", until: Fixtures.at(30), now: Fixtures.t0)
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 1)
        }
    }

    @Test(arguments: StoreFactory.allCases)
    func pingSucceeds(_ factory: StoreFactory) async throws {
        try await factory.withStore { store throws in
            try await store.ping()
        }
    }
}
