import GatehouseCore
import Logging
import Testing

@testable import GatehouseServer

/// SPEC "Operators' signals under faults": while the store is down the log has one line when it goes down (with
/// the cause), at most one line per 10 s with the number of requests refused meanwhile, and one when it is back.
struct StoreOutageLogTests {
    @Test("the outage log: one line down with the cause, a count at most every 10 s, one line back")
    func stateMachine() {
        var log = OutageLog(interval: .seconds(10))
        let start = ContinuousClock.now
        #expect(log.answered(at: start) == nil)
        #expect(log.refused(cause: "connection refused", at: start) == .down(cause: "connection refused"))
        for second in 1...9 {
            #expect(log.refused(cause: "connection refused", at: start + .seconds(second)) == nil)
        }
        #expect(log.refused(cause: "connection refused", at: start + .seconds(10)) == .stillDown(refused: 10, downFor: .seconds(10)))
        #expect(log.refused(cause: "connection refused", at: start + .seconds(15)) == nil)
        #expect(log.refused(cause: "connection refused", at: start + .seconds(19)) == nil)
        #expect(log.answered(at: start + .seconds(21)) == .back(refused: 2, downFor: .seconds(21)))
        #expect(log.answered(at: start + .seconds(22)) == nil)
        // A new outage starts its own count.
        #expect(log.refused(cause: "timeout", at: start + .seconds(30)) == .down(cause: "timeout"))
        #expect(log.answered(at: start + .seconds(31)) == .back(refused: 0, downFor: .seconds(1)))
    }

    @Test("an answer to a call made before the outage was noticed does not end it: no line back and down again")
    func anAnswerToAnEarlierCallDoesNotEndTheOutage() {
        var log = OutageLog(interval: .seconds(10))
        let start = ContinuousClock.now
        let before = start - .milliseconds(3)
        #expect(log.refused(cause: "clientClosedConnection", at: start) == .down(cause: "clientClosedConnection"))
        // A statement under way when the store began to shut down is still answered on its connection.
        #expect(log.answered(at: start + .milliseconds(1), started: before) == nil)
        #expect(log.isDown)
        #expect(log.refused(cause: "connection refused", at: start + .milliseconds(2)) == nil)
        // A call made since is the first answer that counts.
        #expect(log.answered(at: start + .seconds(14), started: start + .seconds(13)) == .back(refused: 1, downFor: .seconds(14)))
    }

    @Test("while a store shuts down under load, calls made before it was seen down and answered late log nothing")
    func callsUnderWayWhenTheStoreStopsLogNothing() async throws {
        let captured = CapturedLog()
        let reporter = StoreOutageReporter(logger: captured.logger)
        let earlier = ContinuousClock.now
        reporter.refused(StoreUnavailableError(reason: "clientClosedConnection"))
        for _ in 0..<20 {
            reporter.answered(started: earlier)
            reporter.refused(StoreUnavailableError(reason: "connection refused"))
        }
        reporter.answered(started: ContinuousClock.now)
        let lines = captured.lines.filter { $0.level > .debug }
        let messages = lines.map { String($0.message.description.prefix(32)) }
        #expect(messages == ["session store unavailable: reque", "session store reachable again"], "\(lines)")
        #expect(lines.last?.metadata["refused"] == "20")
    }

    @Test("a hundred requests refused while the store is down are two lines, not a hundred warnings with the whole error")
    func refusedCallsAreSummarized() async throws {
        let captured = CapturedLog()
        let base = SwitchableStore()
        let store = InstrumentedSessionStore(base: base, metrics: GatewayMetrics(), outages: StoreOutageReporter(logger: captured.logger))
        _ = try await store.session(tokenHash: "x")
        #expect(captured.lines.isEmpty)

        base.setDown(true)
        for _ in 0..<100 {
            await #expect(throws: StoreUnavailableError.self) { try await store.session(tokenHash: "x") }
            // What a refused request's own path logs: at debug level only.
            _ = ErrorMapping.problem(for: StoreUnavailableError(reason: base.cause), logger: captured.logger)
        }
        base.setDown(false)
        _ = try await store.session(tokenHash: "x")
        _ = try await store.session(tokenHash: "x")

        let lines = captured.lines.filter { $0.level > .debug }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.level == .warning)
        #expect(lines.first?.message.hasPrefix("session store unavailable") == true)
        #expect(lines.first?.metadata["cause"] == base.cause)
        #expect(lines.last?.level == .notice)
        #expect(lines.last?.message == "session store reachable again")
        #expect(lines.last?.metadata["refused"] == "99")
    }
}
