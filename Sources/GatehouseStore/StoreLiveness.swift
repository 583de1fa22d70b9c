import Synchronization

/// When the store last answered, and how long a call may wait for it.
///
/// A stopped PostgreSQL refuses and closes connections, which is known at once; a paused or unreachable
/// one does not answer at all, and only a deadline shows it. A short fixed deadline would also fail calls
/// that merely queue for a connection on a busy but healthy store, so a call is given up early only when
/// the store has been *silent*: no call of this store got an answer for ``silenceLimit``. While others get
/// answers, a call may wait up to its own `limit`.
final class StoreLiveness: Sendable {
    /// Why a call was given up.
    enum Verdict: Sendable, Equatable {
        /// No answer from the store for ``StoreLiveness/silenceLimit``: it is unreachable (opens the breaker).
        case silent(Duration)
        /// The call waited its whole limit while the store answered others (this call only fails).
        case tooSlow(Duration)
        /// The breaker opened while the call waited: it fails with the others.
        case breakerOpened
    }

    /// The silence after which a call on a request's path is given up. The SPEC allows 1 s from the fault
    /// to the 503; this leaves room for the HTTP round trip and for waking late on a loaded machine.
    let silenceLimit: Duration
    /// How often a waiting call looks at the breaker, so calls queued when it opens fail soon after.
    let breakerCheckInterval: Duration
    private let clock = ContinuousClock()
    private let lastAnswer: Mutex<ContinuousClock.Instant>

    init(silenceLimit: Duration = .milliseconds(750), breakerCheckInterval: Duration = .milliseconds(50)) {
        self.silenceLimit = silenceLimit
        self.breakerCheckInterval = breakerCheckInterval
        self.lastAnswer = Mutex(clock.now)
    }

    /// The store answered a call (with rows or an SQL error: either way it is there).
    func answered() {
        let now = clock.now
        lastAnswer.withLock { $0 = max($0, now) }
    }

    /// When the store last answered.
    var lastAnswered: ContinuousClock.Instant { lastAnswer.withLock { $0 } }

    /// Returns once the call begun at `start` should be given up: the store went silent (when
    /// `givesUpOnSilence`), the call waited `limit`, or `breaker` (if given) opened. Throws
    /// `CancellationError` when the call ends first (its task is cancelled).
    func verdict(
        callStartedAt start: ContinuousClock.Instant, limit: Duration, givesUpOnSilence: Bool, breaker: StoreCircuitBreaker?
    ) async throws -> Verdict {
        while true {
            if breaker?.isOpen == true { return .breakerOpened }
            let now = clock.now
            if now - start >= limit { return .tooSlow(limit) }
            var wake = min(start + limit, now + breakerCheckInterval)
            if givesUpOnSilence {
                // Silent since the later of the call's start and the last answer: an answer just before the
                // call began does not shorten its wait.
                let silentSince = max(start, lastAnswered)
                if now - silentSince >= silenceLimit { return .silent(silenceLimit) }
                wake = min(wake, silentSince + silenceLimit)
            }
            try await Task.sleep(until: wake, clock: clock)
        }
    }
}
