import GatehouseCore
import NIOCore

/// One request of a ``LaneFront``, from its decision to its answer's end. A class: the lane's callbacks read and
/// change it in place, and a stale callback (a connection made for an exchange that ended) tells it apart by
/// identity.
final class LaneExchange {
    /// Where the backend's answer is.
    enum Answer {
        /// Its head (or the next one, after a `1xx`) is still to come; the bytes of it read so far.
        case head(ByteBuffer?)
        /// The body: so many bytes left.
        case length(left: Int)
        case chunked(ChunkedBodyScanner)
        /// The body ends with the backend's connection; the client gets it in chunks.
        case untilClose
    }

    /// What reading an answer head off the backend's bytes came to.
    enum HeadOutcome {
        case incomplete
        case declined
        case read(length: Int, status: Int, framing: ResponseFraming, keepAlive: Bool)
    }

    /// The upstream head as bytes (kept to be sent again on a new connection).
    let head: ByteBuffer
    /// For the access log, the metrics and the trace.
    let entry: APIRelay.Entry
    /// The client keeps its connection after this answer.
    let clientKeepAlive: Bool
    let pool: LaneConnectionPool
    let started = ContinuousClock.now
    /// The connection the request went out on.
    var connection: LaneConnection?
    /// ``connection`` had served a request before (a request it loses before any answer is sent again once).
    var reused = false
    /// Connections the request was sent on.
    var attempts = 0
    /// The backend must start its answer by then.
    var deadline = NIODeadline.distantFuture
    var answer = Answer.head(nil)
    /// Something of the answer went to the client (a `1xx` or the final head): a failure can only end the connection.
    var answerStarted = false
    /// The status the client got (0 until the final head went out).
    var status = 0
    /// The backend's answer lets its connection serve another request.
    var upstreamKeepAlive = true

    init(head: ByteBuffer, entry: APIRelay.Entry, clientKeepAlive: Bool, pool: LaneConnectionPool) {
        self.head = head
        self.entry = entry
        self.clientKeepAlive = clientKeepAlive
        self.pool = pool
    }
}
