import NIOCore
import NIOHTTP1

/// `limits.client_body_timeout_seconds` (nginx's `client_body_timeout`) for the requests of one HTTP/1.1
/// connection (``HTTP1ConnectionGuard``, which answers `408`) or one HTTP/2 stream (``HTTP2StreamCodec``,
/// which resets it): a client that declares 100 bytes and sends 1 would otherwise hold its connection, and the
/// relay's or the router's request, for as long as it likes. The handler that owns it keeps the one timer and
/// tells it what passes; it says when the timer is due and, when it fires, whether the body has expired.
///
/// Only the client's slowness counts: the clock runs while the gateway has asked for more bytes (a `read`
/// passed towards the socket) and none came. While the relay or the router hold reading back because the
/// backend is slower than the client (back-pressure), nothing is cut. The timer is armed only at the end of a
/// read that leaves a request's body open, so a request whose head and end come in one read (every request
/// without a body) costs no timer; while a body flows, the one timer looks at the time when it fires.
struct ClientBodyClock {
    /// What the timer does when it fires.
    enum Verdict {
        /// No body is open: the timer is not armed again.
        case done
        /// Look again then.
        case later(NIODeadline)
        /// The body made no progress for the whole timeout: cut the request.
        case expired
    }

    let timeout: TimeAmount
    /// A request's head came and its end has not.
    private(set) var bodyOpen = false
    /// Since when the gateway has waited for bytes that have not come (a `read` asked and nothing read since).
    private var waitingSince: NIODeadline?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// A part of a request was read: bytes came.
    @inline(__always)
    mutating func read(_ part: HTTPServerRequestPart) {
        waitingSince = nil
        switch part {
        case .head: bodyOpen = true
        case .body: break
        case .end: bodyOpen = false
        }
    }

    /// A `read` passes towards the socket at `now`: the gateway waits for the client from then on.
    @inline(__always)
    mutating func asked(at now: @autoclosure () -> NIODeadline) {
        if bodyOpen, waitingSince == nil { waitingSince = now() }
    }

    /// Where the timer goes when a read ends at `now`, if it is to be armed (a body is open); `now` is only
    /// asked for then.
    @inline(__always)
    func deadline(afterReadAt now: @autoclosure () -> NIODeadline) -> NIODeadline? {
        bodyOpen ? now() + timeout : nil
    }

    /// What the timer, firing at `now`, does; `expired` also closes the body (nothing more is awaited).
    mutating func verdict(at now: NIODeadline) -> Verdict {
        guard bodyOpen else { return .done }
        // Not waiting for the client (held back, or bytes came since): look again a whole timeout later.
        guard let waitingSince else { return .later(now + timeout) }
        let due = waitingSince + timeout
        guard due <= now else { return .later(due) }
        bodyOpen = false
        return .expired
    }
}
