import GatehouseCore
import NIOCore
import NIOHTTP1

// What ``APIRelayHandler`` does after each event: the machine decides, the handler carries it out.
extension APIRelayHandler.StateMachine {
    /// An exchange's access-log line and request metrics.
    struct Record {
        let entry: APIRelay.Entry
        var status: Int
        let started: ContinuousClock.Instant
    }

    /// Take a connection for exchange `id` from the pool of `upstream` (a new one when `fresh`).
    struct Acquire: Equatable {
        let id: Int
        /// The route the request was decided with; `nil`: the handler's own default source (tests).
        let upstream: UpstreamRoute?
        let fresh: Bool

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.id == rhs.id && lhs.upstream === rhs.upstream && lhs.fresh == rhs.fresh
        }
    }

    /// A part of the client's request arrived.
    enum ReadAction {
        /// On to the router, untouched.
        case forwardToRouter
        /// A request head: ask ``APIRelay`` for the decision with the connection's `memo`, then call
        /// ``APIRelayHandler/StateMachine/decided(_:for:memo:)`` with the decision and the memo after it.
        case decide(HTTPRequestHead, memo: CredentialMemo?)
        /// Kept or dropped: nothing to do.
        case nothing
        /// Write a body part upstream (flushed when the read completes).
        case writeUpstream(Connection, ByteBuffer)
        /// Write the request's end upstream and flush.
        case endUpstream(Connection)
        case fail(Failure)
    }

    /// What the decision about a request head asks for.
    enum DecisionAction {
        /// Hand the head on to the router.
        case pass
        /// The relay owns the request: take a connection.
        case start(Acquire)
        /// Answer the refusal; the connection ends with it when `close`.
        case refuse(GatehouseError, APIRelay.Entry, close: Bool)
        /// Write this answer (no body); the connection ends with it unless the client keeps it alive.
        case answer(HTTPResponseHead, APIRelay.Entry)
        /// Spend the proof off the loop, then call ``APIRelayHandler/StateMachine/resolved(_:)``.
        case spend(DPoPProof, then: APIRelay.Plan)
        /// Decide off the loop, then call ``APIRelayHandler/StateMachine/resolved(_:)``.
        case resolveAsync
    }

    /// What a decision made off the loop asks for.
    enum ResolvedAction {
        case nothing
        /// Take a connection, then give `pending` to ``APIRelayHandler/StateMachine/relayed(_:)`` and flush.
        case start(Acquire, pending: ArraySlice<HTTPServerRequestPart>)
        /// Answer the refusal of the request `head`, then resume reading.
        case refuse(GatehouseError, APIRelay.Entry, head: HTTPRequestHead, close: Bool)
        /// Write this answer to the request `head` (no body), then resume reading.
        case answer(HTTPResponseHead, APIRelay.Entry, head: HTTPRequestHead)
        /// Hand these parts to the router, then resume reading.
        case pass([HTTPServerRequestPart])
    }

    /// A connection is ready.
    enum ConnectedAction {
        /// Its exchange ended meanwhile: close it.
        case close(Connection)
        case send(Send)
    }

    /// Send the request on a connection: its head, `body`, the end when `end`; read the connection only
    /// when `clientWritable`; arm the timer when `armTimer` is set; then resume reading the client.
    struct Send {
        let connection: Connection
        let head: HTTPRequestHead
        let body: [ByteBuffer]
        let end: Bool
        let clientWritable: Bool
        let armTimer: NIODeadline?
    }

    /// The backend's head arrived.
    enum UpstreamHeadAction {
        case nothing
        /// A `1xx` other than `101`: pass it on.
        case informational(HTTPResponseHead)
        /// The `101` that completes the handshake: pass it on with the request id.
        case switching(HTTPResponseHead, requestID: String)
        /// The final answer's head: pass it on with the request id (and `Connection: close` when `close`).
        case final(HTTPResponseHead, requestID: String, close: Bool, upstream: UpstreamRoute?, started: ContinuousClock.Instant)
        case fail(Failure)
    }

    /// The backend's answer ended.
    enum UpstreamEndAction {
        case nothing
        /// Release the connection to its pool when `reuse` (else close it: the pool is the one of the record's
        /// route), record, write the end; close the client's connection after it when `closeClient`, else resume reading.
        case finish(connection: Connection?, reuse: Bool, record: Record, closeClient: Bool)
        /// Record, write the end, join the two connections.
        case tunnel(Connection, record: Record)
    }

    /// The backend connection failed or closed before its exchange ended.
    enum UpstreamFailedAction {
        case nothing
        /// Part of the answer is out: close both connections (the client learns of it by the close).
        case abandon(Connection)
        /// Close the connection and take a new one: the request goes out again.
        case retry(Connection, Acquire)
        case fail(Failure)
    }

    /// The timer fired.
    enum TimerAction {
        case nothing
        /// The deadline is later: arm the timer again.
        case arm(NIODeadline)
        case fail(Failure)
    }

    /// A part the router writes.
    enum RouterWriteAction {
        case write
        /// Write this instead (a head with `Connection: close`).
        case replace(HTTPServerResponsePart)
        /// Write and flush the end, then close the connection.
        case endAndClose
    }

    /// Why an exchange ends with a problem answer (for metrics and log lines).
    enum FailureCause {
        case requestUnreadable
        case bodyTooLarge
        /// A body part after a head forwarded without framing (never from the decoders in front; kept as a wall).
        case unframedBody
        case upstreamUnreachable(any Error)
        case upstreamTimeout
        case invalidSwitch
    }

    /// End the exchange: close `connection`; when `responseStarted`, close the client's connection and
    /// record; else record, answer the problem (with a body when `withBody`), and close after it when
    /// `closing` or resume reading.
    struct Failure {
        let cause: FailureCause
        let error: GatehouseError
        /// The exchange's entry; `nil` when the request failed before it had one.
        let entry: APIRelay.Entry?
        let connection: Connection?
        let record: Record?
        let responseStarted: Bool
        let withBody: Bool
        let closing: Bool
    }
}
