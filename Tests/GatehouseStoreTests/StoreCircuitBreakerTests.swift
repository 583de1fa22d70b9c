import GatehouseCore
import GatehouseStore
import Synchronization
import Testing

@Suite struct StoreCircuitBreakerTests {
    final class Flag: Sendable {
        private let value = Mutex(false)
        private let probes = Mutex(0)
        func set(_ newValue: Bool) { value.withLock { $0 = newValue } }
        func probe() -> Bool {
            probes.withLock { $0 += 1 }
            return value.withLock { $0 }
        }
        var probeCount: Int { probes.withLock { $0 } }
    }

    @Test func opensOnAFaultFailsFastProbesInTheBackgroundAndClosesWhenTheStoreAnswers() async throws {
        let breaker = StoreCircuitBreaker(probeInterval: .milliseconds(50))
        try breaker.check()
        let reachable = Flag()
        breaker.trip(reason: "connection refused") { reachable.probe() }
        #expect(breaker.isOpen)
        #expect(throws: StoreUnavailableError.self) { try breaker.check() }
        // A second fault while open starts no second probe loop.
        breaker.trip(reason: "again") {
            Issue.record("a second probe loop")
            return false
        }
        let probing = ContinuousClock.now + .seconds(30)
        while reachable.probeCount < 2, ContinuousClock.now < probing { try await Task.sleep(for: .milliseconds(20)) }
        #expect(breaker.isOpen)
        #expect(reachable.probeCount >= 2)
        reachable.set(true)
        let deadline = ContinuousClock.now + .seconds(30)
        while breaker.isOpen, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!breaker.isOpen)
        try breaker.check()
        // Probing stops once closed.
        let probes = reachable.probeCount
        try await Task.sleep(for: .milliseconds(200))
        #expect(reachable.probeCount == probes)
    }

    @Test func stopEndsProbing() async throws {
        let breaker = StoreCircuitBreaker(probeInterval: .milliseconds(20))
        let reachable = Flag()
        breaker.trip(reason: "down") { reachable.probe() }
        breaker.stop()
        let probes = reachable.probeCount
        try await Task.sleep(for: .milliseconds(150))
        #expect(reachable.probeCount <= probes + 1)
        #expect(!breaker.isOpen)
    }
}
