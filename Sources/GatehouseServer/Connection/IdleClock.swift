import NIOCore

/// `limits.client_idle_timeout_seconds` for one connection, with one timer (``HTTP1ConnectionGuard`` between
/// requests, ``HTTP2ConnectionKeeper`` between streams): the connection notes when it goes idle, and the timer, when
/// it fires, asks whether to close or when to look again — instead of a timer re-armed each time the connection goes
/// idle (which on the relay's path costs a heap insert and a cancel per request).
struct IdleClock {
    /// What the timer does when it fires.
    enum Verdict {
        /// Idle for the whole timeout: close the connection.
        case close
        /// Look again then.
        case later(NIODeadline)
    }

    let timeout: TimeAmount
    /// When the connection last went idle.
    private var idleSince = NIODeadline.now()

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// Where the timer goes when the connection has just gone idle.
    var deadline: NIODeadline { idleSince + timeout }

    /// The connection has nothing in flight from now on.
    mutating func idle(at now: NIODeadline = .now()) {
        idleSince = now
    }

    /// What the timer, firing at `now`, does: while something is in flight (never cut), look again a whole
    /// timeout later.
    func verdict(busy: Bool, at now: NIODeadline) -> Verdict {
        if busy { return .later(now + timeout) }
        return deadline <= now ? .close : .later(deadline)
    }
}
