import GatehouseCore
import NIOCore
import NIOHTTP1

extension APIRelayHandler {
    /// Every decision of ``APIRelayHandler`` for one client connection, as a value: each event (a part from the
    /// client, a decision, a connection ready or failed, a part from the backend, a writability change, the
    /// timer, the client leaving) is a `mutating func` that moves the state on and returns what the handler
    /// must do. No I/O happens here, so each rule can be tested on its own; `Connection` is whatever stands for a
    /// backend connection (``UpstreamConnection`` in the handler).
    ///
    /// The state moves on before the handler writes anything: writing the end of an answer lets the pipeline
    /// handler deliver the next request into the handler at once, re-entering the machine.
    struct StateMachine<Connection> {
        /// The settings the machine applies.
        struct Limits {
            /// The largest request body relayed (then 413).
            let maxBodyBytes: Int
            /// The largest body kept to be sent again.
            let replayLimitBytes: Int
        }

        enum State {
            /// Between requests.
            case idle
            /// The current request is the router's, up to its end.
            case passing
            /// The request became a tunnel: nothing more is HTTP.
            case tunnelled
            /// Waiting for a decision made off the loop; the parts read meanwhile are kept.
            case resolving([HTTPServerRequestPart])
            /// The relay owns the request; the phase says how far its exchange is.
            case relaying(Exchange, Phase)
            /// The answer is out; what is left of the request is dropped.
            case discarding
            /// Only while a `mutating func` changes an exchange in place (no copy of its buffers).
            case modifying
        }

        /// Moved only by the machine's own events (here and in `+Backend`): set nowhere else.
        var state = State.idle
        /// The session this connection's last relayed request presented (``CredentialMemo``): handed out with
        /// each head to decide (``ReadAction/decide(_:memo:)``), taken back with the decision.
        private var memo: CredentialMemo?
        private let limits: Limits
        /// A read the channel asked for while the relay could not take more.
        private var readPending = false
        /// The router is answering an upgrade request (or `CONNECT`): the decoder reads nothing after it, so
        /// the connection ends with the answer.
        private var closeAfterPassedResponse = false
        /// One timer per connection, not per request (scheduling and cancelling one per request cost 3 % of the
        /// relay's CPU): armed until it fires or the client leaves.
        var timerArmed = false
        private var exchanges = 0

        init(limits: Limits) {
            self.limits = limits
        }

        // MARK: From the client

        /// A part of the client's request.
        mutating func clientRead(_ part: HTTPServerRequestPart) -> ReadAction {
            switch state {
            case .idle:
                guard case .head(let head) = part else { return .forwardToRouter }
                return .decide(head, memo: memo)
            case .passing:
                if case .end = part { state = .idle }
                return .forwardToRouter
            case .resolving(var parts):
                state = .modifying
                parts.append(part)
                state = .resolving(parts)
                return .nothing
            case .relaying:
                return relayed(part)
            case .discarding:
                if case .end = part { state = .idle }
                return .nothing
            case .tunnelled:
                return .nothing
            case .modifying:
                preconditionFailure("re-entered while modifying")
            }
        }

        /// A part of a request the relay owns (read now, or kept while the decision was made).
        mutating func relayed(_ part: HTTPServerRequestPart) -> ReadAction {
            guard case .relaying(let exchange, var phase) = state else { return .nothing }
            // Out of the state while it changes, so its buffers are not copied.
            state = .modifying
            switch part {
            case .head:
                state = .relaying(exchange, phase)
                return .nothing
            case .body(let buffer):
                // Bytes after a head that announced no body would be read upstream as the next request.
                guard exchange.framed else {
                    let error = GatehouseError.invalidRequest("The request carries a body its head did not announce.")
                    return .fail(fail(exchange, phase, .unframedBody, error, closing: true))
                }
                exchange.bodyBytes += buffer.readableBytes
                guard exchange.bodyBytes <= limits.maxBodyBytes else {
                    let error = UpstreamProtocol.Failure.bodyTooLarge(limit: limits.maxBodyBytes).error
                    return .fail(fail(exchange, phase, .bodyTooLarge, error, closing: true))
                }
                if exchange.kept != nil {
                    exchange.keptBytes += buffer.readableBytes
                    if exchange.idempotent, exchange.keptBytes <= limits.replayLimitBytes {
                        exchange.kept?.append(buffer)
                    } else if exchange.attempts > 0, phase.link == nil {
                        // Connecting again to send the kept body: past the replay limit it can no longer be sent
                        // whole, and a part of it must never reach the backend as if it were all.
                        let cause = UpstreamProtocol.Failure.replayTooLarge.error
                        return .fail(unreachable(exchange, phase, cause))
                    } else {
                        exchange.kept = nil
                    }
                }
                guard let link = phase.link else {
                    // The first attempt sends what arrived while connecting; a second one sends what was kept.
                    if exchange.attempts == 0, case .connecting(var unsent) = phase {
                        phase = .connecting(unsent: [])
                        unsent.append(buffer)
                        phase = .connecting(unsent: unsent)
                    }
                    state = .relaying(exchange, phase)
                    return .nothing
                }
                state = .relaying(exchange, phase)
                return .writeUpstream(link.connection, buffer)
            case .end:
                exchange.requestComplete = true
                state = .relaying(exchange, phase)
                guard let link = phase.link else { return .nothing }
                return .endUpstream(link.connection)
            }
        }

        /// The decision about the request head `head` (read in ``State/idle``), and the connection's memo after it.
        mutating func decided(_ decision: APIRelay.Plan, for head: HTTPRequestHead, memo: CredentialMemo?) -> DecisionAction {
            self.memo = memo
            switch decision {
            case .pass:
                pass(head)
                return .pass
            case .forward(let upstreamHead, let entry):
                return .start(start(upstreamHead, entry: entry, clientKeepAlive: head.isKeepAlive, upgrade: false))
            case .upgrade(let upstreamHead, let entry):
                return .start(start(upstreamHead, entry: entry, clientKeepAlive: false, upgrade: true))
            case .refuse(let error, let entry):
                return .refuse(error, entry, close: refused(head, requestComplete: false))
            case .answer(let answer, let entry):
                answered(requestComplete: false)
                return .answer(answer, entry)
            case .spend(let proof, let then):
                // Only the proof's record leaves the loop; the parts read meanwhile are kept.
                state = .resolving([.head(head)])
                return .spend(proof, then: then)
            case .resolveAsync:
                state = .resolving([.head(head)])
                return .resolveAsync
            }
        }

        /// The relay answered the request itself (forward authentication): the rest is dropped.
        private mutating func answered(requestComplete: Bool) {
            state = requestComplete ? .idle : .discarding
        }

        /// The relay refuses the request `head`: the rest is dropped. Whether the connection ends with the answer
        /// (after an upgrade request, whose client decoder reads nothing more, or a `Connection: close`).
        mutating func refused(_ head: HTTPRequestHead, requestComplete: Bool) -> Bool {
            let close = !head.isKeepAlive || head.headers.contains(name: "upgrade")
            state = requestComplete && !close ? .idle : .discarding
            return close
        }

        /// The decision made off the loop.
        mutating func resolved(_ decision: APIRelay.Plan) -> ResolvedAction {
            guard case .resolving(let parts) = state, case .head(let head) = parts.first else { return .nothing }
            switch decision {
            case .forward(let upstreamHead, let entry):
                return .start(start(upstreamHead, entry: entry, clientKeepAlive: head.isKeepAlive, upgrade: false), pending: parts.dropFirst())
            case .upgrade(let upstreamHead, let entry):
                return .start(start(upstreamHead, entry: entry, clientKeepAlive: false, upgrade: true), pending: parts.dropFirst())
            case .refuse(let error, let entry):
                let complete = parts.contains { if case .end = $0 { true } else { false } }
                return .refuse(error, entry, head: head, close: refused(head, requestComplete: complete))
            case .answer(let answer, let entry):
                answered(requestComplete: parts.contains { if case .end = $0 { true } else { false } })
                return .answer(answer, entry, head: head)
            case .pass, .resolveAsync, .spend:
                pass(head)
                if parts.contains(where: { if case .end = $0 { true } else { false } }) { state = .idle }
                return .pass(parts)
            }
        }

        /// The channel asks for a read: whether to read now (else it is remembered for ``resumeReading()``).
        mutating func readRequested() -> Bool {
            switch state {
            case .resolving:
                readPending = true
                return false
            case .relaying(_, let phase):
                guard phase.link?.writable == true else {
                    readPending = true
                    return false
                }
                return true
            case .idle, .passing, .discarding, .tunnelled:
                return true
            case .modifying:
                preconditionFailure("re-entered while modifying")
            }
        }

        /// Whether a read the channel asked for can be made now.
        mutating func resumeReading() -> Bool {
            guard readPending else { return false }
            if case .relaying(_, let phase) = state, phase.link?.writable != true { return false }
            readPending = false
            return true
        }

        /// The client's read completed: the connection to flush, if any.
        func readComplete() -> Connection? {
            guard case .relaying(_, let phase) = state else { return nil }
            return phase.link?.connection
        }

        /// The client's connection became writable or not: the backend connection to read only while it is.
        func clientWritabilityChanged() -> Connection? {
            guard case .relaying(_, let phase) = state, phase.responseStarted else { return nil }
            return phase.link?.connection
        }

        /// The router writes `part`.
        mutating func routerWrites(_ part: HTTPServerResponsePart) -> RouterWriteAction {
            guard closeAfterPassedResponse else { return .write }
            switch part {
            case .head(var head) where head.status.code >= 200:
                head.headers.replaceOrAdd(name: "Connection", value: "close")
                return .replace(.head(head))
            case .end:
                closeAfterPassedResponse = false
                return .endAndClose
            case .head, .body:
                return .write
            }
        }

        /// The client's request broke (a malformed chunk): the failure to answer, or `nil` to pass the error on.
        mutating func clientError() -> Failure? {
            let error = GatehouseError.invalidRequest("The request body could not be read.")
            switch state {
            case .relaying(let exchange, let phase): return fail(exchange, phase, .requestUnreadable, error, closing: true)
            case .resolving: return fail(nil, nil, .requestUnreadable, error, closing: true)
            case .idle, .passing, .discarding, .tunnelled: return nil
            case .modifying: preconditionFailure("re-entered while modifying")
            }
        }

        /// The client left (or the handler was removed): the backend connection to close and the line to record
        /// (nginx's 499, "client closed request", when the answer had not started).
        mutating func clientClosed() -> (connection: Connection?, record: Record)? {
            timerArmed = false
            defer { state = .idle }
            guard case .relaying(let exchange, let phase) = state else { return nil }
            var record = exchange.record
            if record.status == 0 { record.status = 499 }
            return (phase.link?.connection, record)
        }

        // MARK: Steps

        private mutating func pass(_ head: HTTPRequestHead) {
            state = .passing
            if head.method == .CONNECT || head.headers.contains(name: "upgrade") { closeAfterPassedResponse = true }
        }

        private mutating func start(_ upstreamHead: HTTPRequestHead, entry: APIRelay.Entry, clientKeepAlive: Bool, upgrade: Bool) -> Acquire {
            exchanges &+= 1
            let exchange = Exchange(
                id: exchanges, head: upstreamHead, entry: entry, clientKeepAlive: clientKeepAlive, upgrade: upgrade, started: .now)
            state = .relaying(exchange, .connecting(unsent: []))
            return Acquire(id: exchanges, upstream: entry.upstream, fresh: false)
        }

        /// The deadline to arm the timer for, unless it is armed already.
        mutating func arm(_ deadline: NIODeadline) -> NIODeadline? {
            guard !timerArmed else { return nil }
            timerArmed = true
            return deadline
        }

        mutating func unreachable(_ exchange: Exchange, _ phase: Phase, _ error: any Error) -> Failure {
            let failure = UpstreamProtocol.Failure.unreachable.error
            return fail(exchange, phase, .upstreamUnreachable(error), failure, closing: !exchange.requestComplete)
        }

        /// Ends the exchange (if any) with a problem answer; `closing` when the rest of the request cannot be read.
        mutating func fail(_ exchange: Exchange?, _ phase: Phase?, _ cause: FailureCause, _ error: GatehouseError, closing: Bool) -> Failure {
            let closing = closing || exchange?.clientKeepAlive == false
            let connection = phase?.link?.connection
            if let exchange, phase?.responseStarted == true {
                state = .discarding
                return Failure(
                    cause: cause, error: error, entry: exchange.entry, connection: connection, record: exchange.record, responseStarted: true,
                    withBody: false, closing: true)
            }
            var record = exchange?.record
            record?.status = error.status
            state = closing ? .discarding : .idle
            return Failure(
                cause: cause, error: error, entry: exchange?.entry, connection: connection, record: record, responseStarted: false,
                withBody: exchange?.head.method != .HEAD, closing: closing)
        }
    }
}
