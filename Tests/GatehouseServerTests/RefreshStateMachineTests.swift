import Foundation
import Testing

@testable import GatehouseServer

/// The cross-instance single-flight decisions of ``RefreshCoordinator/StateMachine``, without sockets or a store.
@Suite struct RefreshStateMachineTests {
    typealias Machine = RefreshCoordinator.StateMachine
    let t0 = Date(timeIntervalSince1970: 1_000)

    @Test func freeLeaseAndUnchangedVersionCallsTheProviderOnce() {
        var machine = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(machine.start() == .readStore)
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: true, now: t0) == .readStore)
        #expect(machine.holdsLease)
        #expect(machine.storeRead(version: 3) == .callProvider)
    }

    @Test func aCredentialStoredJustBeforeIsReusedWithoutTakingTheLease() {
        var machine = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(machine.storeRead(version: 4) == .useStored)
        #expect(!machine.holdsLease)
    }

    @Test func anotherInstanceFinishingWhileWeTookTheLeaseIsReused() {
        var machine = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: true, now: t0) == .readStore)
        // The re-read under the lease sees the other instance's result: never spend the rotated token twice.
        #expect(machine.storeRead(version: 4) == .useStored)
        #expect(machine.holdsLease, "the coordinator must still release the lease")
    }

    @Test func aHeldLeaseMakesUsWaitThenUseTheHoldersResult() {
        var machine = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: false, now: t0) == .pauseThenReadStore)
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: false, now: t0.addingTimeInterval(1)) == .pauseThenReadStore)
        #expect(machine.storeRead(version: 4) == .useStored)
        #expect(!machine.holdsLease)
    }

    @Test func aKilledHoldersLeaseLapsesAndWeRefresh() {
        // The holder died; its lease expires before our deadline and the store grants it to us.
        var machine = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: false, now: t0.addingTimeInterval(20)) == .pauseThenReadStore)
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: true, now: t0.addingTimeInterval(30)) == .readStore)
        #expect(machine.storeRead(version: 3) == .callProvider)
    }

    @Test func waitingIsBoundedByTheDeadline() {
        var machine = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(machine.storeRead(version: 3) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: false, now: t0.addingTimeInterval(35)) == .failTimedOut)
        #expect(!machine.holdsLease)
    }

    @Test func anEndedSessionFailsAtAnyStep() {
        var before = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        #expect(before.storeRead(version: nil) == .failSessionEnded)

        var underLease = Machine(seenVersion: 3, force: false, deadline: t0.addingTimeInterval(35))
        _ = underLease.storeRead(version: 3)
        _ = underLease.leaseAttempted(acquired: true, now: t0)
        #expect(underLease.storeRead(version: nil) == .failSessionEnded)
    }

    @Test func forceRefreshesEvenWhenANewerCredentialIsStored() {
        var machine = Machine(seenVersion: 3, force: true, deadline: t0.addingTimeInterval(35))
        #expect(machine.storeRead(version: 4) == .acquireLease)
        #expect(machine.leaseAttempted(acquired: true, now: t0) == .readStore)
        #expect(machine.storeRead(version: 4) == .callProvider)
    }
}
