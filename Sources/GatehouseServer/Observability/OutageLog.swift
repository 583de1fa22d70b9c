/// What the log says about a dependency that stops answering (the session store): one line when it goes down,
/// with the cause; then at most one line per ``interval`` with the number of requests refused meanwhile; and one
/// line when it is back. A value-type state machine: the caller supplies the time and writes the lines.
///
/// ```swift
/// var log = OutageLog()
/// if let line = log.refused(cause: error.reason, at: clock.now) { logger.warning(…) }
/// if let line = log.answered(at: clock.now) { logger.notice(…) }
/// ```
struct OutageLog: Sendable {
    /// A line to write.
    enum Line: Sendable, Equatable {
        /// It went down: the first refusal, with its cause.
        case down(cause: String)
        /// Still down: the requests refused since the previous line, and how long it has been down.
        case stillDown(refused: Int, downFor: Duration)
        /// It answered again: the requests refused since the previous line, and how long it was down.
        case back(refused: Int, downFor: Duration)
    }

    private enum State: Sendable {
        case up
        case down(since: ContinuousClock.Instant, lastLine: ContinuousClock.Instant, refusedSinceLine: Int)
    }

    /// The least time between two lines while it is down.
    let interval: Duration
    private var state = State.up

    /// - Parameter interval: at most one "still down" line this often (10 s).
    init(interval: Duration = .seconds(10)) {
        self.interval = interval
    }

    /// Whether it is down now.
    var isDown: Bool {
        if case .down = state { return true }
        return false
    }

    /// A request was refused because it is down; the line to write, if one is due.
    mutating func refused(cause: String, at now: ContinuousClock.Instant) -> Line? {
        switch state {
        case .up:
            state = .down(since: now, lastLine: now, refusedSinceLine: 0)
            return .down(cause: cause)
        case .down(let since, let lastLine, let refused):
            guard now - lastLine >= interval else {
                state = .down(since: since, lastLine: lastLine, refusedSinceLine: refused + 1)
                return nil
            }
            state = .down(since: since, lastLine: now, refusedSinceLine: 0)
            return .stillDown(refused: refused + 1, downFor: now - since)
        }
    }

    /// It answered a call; the line to write when that ends an outage. A call `started` before the outage was
    /// noticed does not end it: while a store shuts down, a statement already under way on one connection may still
    /// be answered as the others are cut, and the outage would be logged as over and begun again within a
    /// millisecond. Only an answer to a call made since it went down says it is back.
    mutating func answered(at now: ContinuousClock.Instant, started: ContinuousClock.Instant? = nil) -> Line? {
        guard case .down(let since, _, let refused) = state else { return nil }
        if let started, started < since { return nil }
        state = .up
        return .back(refused: refused, downFor: now - since)
    }
}
