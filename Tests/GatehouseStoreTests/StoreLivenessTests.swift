import GatehouseCore
import PostgresNIO
import Testing

@testable import GatehouseStore

/// The deadlines of a call: given up on silence, not on a busy store; at once when the breaker opens.
@Suite struct StoreLivenessTests {
    @Test func aCallIsGivenUpOnceTheStoreIsSilentForTheLimit() async throws {
        let liveness = StoreLiveness(silenceLimit: .milliseconds(100))
        let started = ContinuousClock.now
        let verdict = try await liveness.verdict(callStartedAt: started, limit: .seconds(30), givesUpOnSilence: true, breaker: nil)
        #expect(verdict == .silent(.milliseconds(100)))
        // Not given up before the limit. The verdict itself shows it was not the call's 30 s limit; how much later
        // than 100 ms it came depends on how busy the test process is (the whole suite runs at once on two cores).
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }

    @Test func aBusyStoreThatAnswersOthersIsNotSilent() async throws {
        let liveness = StoreLiveness(silenceLimit: .milliseconds(100))
        let others = Task {
            while !Task.isCancelled {
                liveness.answered()
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        defer { others.cancel() }
        let verdict = try await liveness.verdict(callStartedAt: .now, limit: .milliseconds(500), givesUpOnSilence: true, breaker: nil)
        #expect(verdict == .tooSlow(.milliseconds(500)))
    }

    @Test func backgroundWorkIsNotGivenUpOnSilence() async throws {
        let liveness = StoreLiveness(silenceLimit: .milliseconds(50))
        let verdict = try await liveness.verdict(callStartedAt: .now, limit: .milliseconds(300), givesUpOnSilence: false, breaker: nil)
        #expect(verdict == .tooSlow(.milliseconds(300)))
    }

    @Test func callsWaitingWhenTheBreakerOpensAreGivenUpAtOnce() async throws {
        let liveness = StoreLiveness(silenceLimit: .seconds(30), breakerCheckInterval: .milliseconds(20))
        let breaker = StoreCircuitBreaker(probeInterval: .seconds(60))
        defer { breaker.stop() }
        let waiting = Task { try await liveness.verdict(callStartedAt: .now, limit: .seconds(30), givesUpOnSilence: true, breaker: breaker) }
        try await Task.sleep(for: .milliseconds(50))
        let opened = ContinuousClock.now
        breaker.trip(reason: "connection refused") { false }
        #expect(try await waiting.value == .breakerOpened)
        #expect(ContinuousClock.now - opened < .seconds(1))
    }

    @Test func connectionFaultsAreToldFromStatementErrors() {
        // A closed or refused connection, however PostgresNIO hands it on, opens the breaker on its first occurrence.
        #expect(PostgresConnectivity.fault(in: ChannelError.ioOnClosedChannel) != nil)
        #expect(PostgresConnectivity.fault(in: ChannelError.eof) != nil)
        #expect(PostgresConnectivity.fault(in: IOError(errnoCode: ECONNREFUSED, reason: "connect")) != nil)
        #expect(PostgresConnectivity.fault(in: IOError(errnoCode: ECONNRESET, reason: "read")) != nil)
        #expect(PostgresConnectivity.fault(in: StoreUnavailableError(reason: "down")) == "down")
        // Errors of the statement or of the data are not the store being away.
        #expect(PostgresConnectivity.fault(in: SessionStoreError.duplicateSession) == nil)
        #expect(PostgresConnectivity.fault(in: PostgresDecodingError.Code.typeMismatch) == nil)
    }
}
