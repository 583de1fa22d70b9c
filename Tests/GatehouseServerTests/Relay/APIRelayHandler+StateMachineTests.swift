import Foundation
import GatehouseCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``APIRelayHandler/StateMachine`` alone: each rule of the relay as events in, actions out, with plain numbers
/// standing for backend connections.
@Suite("APIRelay state machine")
struct APIRelayHandlerStateMachineTests {
    private typealias Machine = APIRelayHandler.StateMachine<Int>

    private static let limits = Machine.Limits(maxBodyBytes: 100, replayLimitBytes: 10)

    private static func head(_ method: HTTPMethod = .GET, _ fields: [(String, String)] = []) -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: method, uri: "/v1/api/x", headers: HTTPHeaders([("Host", "h")] + fields))
    }

    private static func bytes(_ count: Int) -> HTTPServerRequestPart {
        .body(ByteBuffer(repeating: 0x61, count: count))
    }

    /// A machine relaying its first exchange (id 1), a `method` request (complete or not) on connection 1
    /// (`reused` or not).
    private static func relaying(
        _ method: HTTPMethod = .GET, body: Int = 0, complete: Bool = true, reused: Bool = false, now: NIODeadline = .uptimeNanoseconds(0)
    ) -> Machine {
        var machine = Machine(limits: limits)
        let entry = APIRelay.Entry(requestID: "r1", method: "\(method)", provider: "demo", sessionID: "s")
        // A head that brings a body says how it is framed (the relay's upstream head always does).
        let framing = body > 0 || !complete ? [("Transfer-Encoding", "chunked")] : []
        guard case .decide(let head, _) = machine.clientRead(.head(Self.head(method, framing))),
            case .start(let acquire) = machine.decided(.forward(head, entry), for: head, memo: nil)
        else { fatalError("not started") }
        if body > 0 { _ = machine.clientRead(bytes(body)) }
        if complete { _ = machine.clientRead(.end(nil)) }
        _ = machine.connectionReady(1, for: acquire.id, reused: reused, upstreamWritable: true, clientWritable: true, timeout: .seconds(5), now: now)
        return machine
    }

    private static func ok(_ status: HTTPResponseStatus = .ok, _ fields: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    @Test(
        "a connection lost before any answer: sent again once, on a new connection, only when idempotent, reused and kept",
        arguments: [
            (HTTPMethod.GET, 0, true, true),
            (.PUT, 10, true, true),
            (.PUT, 11, true, false),  // past the replay limit: not kept
            (.POST, 0, true, false),
            (.GET, 0, false, false),  // a new connection's loss is the backend's failure
        ])
    func retryRule(method: HTTPMethod, body: Int, reused: Bool, retried: Bool) {
        var machine = Self.relaying(method, body: body, reused: reused)
        switch machine.upstreamFailed(UpstreamConnectionHandler.Closed()) {
        case .retry(let connection, let again):
            #expect(retried)
            #expect(connection == 1)
            #expect(again == Machine.Acquire(id: 1, upstream: nil, fresh: true))
            // The second attempt sends everything kept; a second loss is the end.
            guard
                case .send(let send) = machine.connectionReady(
                    2, for: 1, reused: false, upstreamWritable: true, clientWritable: true, timeout: .seconds(5), now: .uptimeNanoseconds(0))
            else {
                Issue.record("not sent")
                return
            }
            #expect(send.body.reduce(0) { $0 + $1.readableBytes } == body)
            #expect(send.end)
            guard case .fail(let failure) = machine.upstreamFailed(UpstreamConnectionHandler.Closed()) else {
                Issue.record("retried twice")
                return
            }
            #expect(failure.error.status == 502)
        case .fail(let failure):
            #expect(!retried)
            #expect(failure.error.status == 502)
            #expect(failure.connection == 1)
            #expect(failure.record?.status == 502)
        case .nothing, .abandon:
            Issue.record("no decision")
        }
    }

    @Test(
        "a body still arriving while the request is sent again: kept whole up to the replay limit, else a 502 and no part of it sent",
        arguments: [(3, true), (5, false)])
    func bodyGrowingDuringRetry(more: Int, sent: Bool) {
        var machine = Self.relaying(.PUT, body: 6, complete: false, reused: true)
        guard case .retry(_, let again) = machine.upstreamFailed(UpstreamConnectionHandler.Closed()) else {
            Issue.record("not retried")
            return
        }
        let read = machine.clientRead(Self.bytes(more))
        if sent {
            guard case .nothing = read else {
                Issue.record("not kept")
                return
            }
            _ = machine.clientRead(.end(nil))
            guard
                case .send(let send) = machine.connectionReady(
                    2, for: again.id, reused: false, upstreamWritable: true, clientWritable: true, timeout: .seconds(5), now: .uptimeNanoseconds(0))
            else {
                Issue.record("not sent")
                return
            }
            #expect(send.body.reduce(0) { $0 + $1.readableBytes } == 6 + more)
            #expect(send.end)
        } else {
            guard case .fail(let failure) = read else {
                Issue.record("a part would have been sent as the whole")
                return
            }
            #expect(failure.error.status == 502)
            #expect(failure.closing)
            // The connection made for the retry comes too late: it is closed, nothing is sent on it.
            guard
                case .close(2) = machine.connectionReady(
                    2, for: again.id, reused: false, upstreamWritable: true, clientWritable: true, timeout: .seconds(5), now: .uptimeNanoseconds(0))
            else {
                Issue.record("the late connection was used")
                return
            }
        }
    }

    @Test("the body limit: at max_body_bytes relayed, one byte more a 413 that closes the connection")
    func bodyLimit() {
        var machine = Self.relaying(.PUT, complete: false)
        guard case .writeUpstream(1, _) = machine.clientRead(Self.bytes(100)) else {
            Issue.record("not written")
            return
        }
        guard case .fail(let failure) = machine.clientRead(Self.bytes(1)) else {
            Issue.record("not refused")
            return
        }
        #expect(failure.error.status == 413)
        #expect(failure.closing)
        #expect(failure.connection == 1)
        // What is left of the request is dropped.
        guard case .nothing = machine.clientRead(Self.bytes(1)) else {
            Issue.record("not dropped")
            return
        }
    }

    @Test("a body part after a head forwarded without framing: 400, the backend connection closed, nothing written on it")
    func unframedBody() {
        // Not `relaying`, which frames an incomplete request: this head says nothing of a body.
        var machine = Machine(limits: Self.limits)
        let entry = APIRelay.Entry(requestID: "r1", method: "GET", provider: nil, sessionID: nil)
        guard case .decide(let head, _) = machine.clientRead(.head(Self.head(.GET))),
            case .start(let acquire) = machine.decided(.forward(head, entry), for: head, memo: nil)
        else {
            Issue.record("not started")
            return
        }
        _ = machine.connectionReady(
            1, for: acquire.id, reused: false, upstreamWritable: true, clientWritable: true, timeout: .seconds(5), now: .uptimeNanoseconds(0))
        guard case .fail(let failure) = machine.clientRead(Self.bytes(10)) else {
            Issue.record("the body would have been written upstream")
            return
        }
        #expect(failure.error.status == 400)
        #expect(failure.closing)
        #expect(failure.connection == 1)
        guard case .nothing = machine.clientRead(.end(nil)) else {
            Issue.record("the rest was not dropped")
            return
        }
    }

    @Test("the timer: armed once, armed again when early, 504 at the deadline, nothing once the answer started")
    func timer() {
        var machine = Self.relaying(now: .uptimeNanoseconds(0))
        let deadline = NIODeadline.uptimeNanoseconds(0) + .seconds(5)
        guard case .arm(let again) = machine.timerFired(now: deadline - .seconds(1)) else {
            Issue.record("not armed again")
            return
        }
        #expect(again == deadline)
        guard case .fail(let failure) = machine.timerFired(now: deadline) else {
            Issue.record("no 504")
            return
        }
        #expect(failure.error.status == 504)
        #expect(!failure.closing)

        var answered = Self.relaying(now: .uptimeNanoseconds(0))
        _ = answered.upstreamHead(Self.ok())
        guard case .nothing = answered.timerFired(now: deadline) else {
            Issue.record("504 after the answer started")
            return
        }
    }

    @Test("a 101 completes only the WebSocket handshake it answers; any other is a 502 that closes both connections")
    func switching() {
        var plain = Self.relaying()
        guard case .fail(let failure) = plain.upstreamHead(Self.ok(.switchingProtocols, [("Upgrade", "raw"), ("Connection", "Upgrade")])) else {
            Issue.record("switch accepted")
            return
        }
        #expect(failure.error.status == 502)
        #expect(failure.closing)
        #expect(failure.connection == 1)
        guard case .invalidSwitch = failure.cause else {
            Issue.record("wrong cause")
            return
        }
    }

    @Test("reads: none while deciding, connecting or while the backend is full; the one held back is made when it can take more")
    func reads() {
        var machine = Machine(limits: Self.limits)
        // Whether the relay reads (or resumes reading) the client after each step.
        var reads: [Bool] = []
        reads.append(machine.readRequested())
        let head = Self.head()
        _ = machine.clientRead(.head(head))
        guard case .resolveAsync = machine.decided(.resolveAsync, for: head, memo: nil) else {
            Issue.record("not resolving")
            return
        }
        reads.append(machine.readRequested())
        let entry = APIRelay.Entry(requestID: "r", method: "GET", provider: nil, sessionID: nil)
        guard case .start(let acquire, let pending) = machine.resolved(.forward(head, entry)) else {
            Issue.record("not started")
            return
        }
        #expect(pending.isEmpty)
        reads.append(machine.resumeReading())
        _ = machine.connectionReady(
            7, for: acquire.id, reused: false, upstreamWritable: false, clientWritable: true, timeout: .seconds(1), now: .now())
        reads.append(machine.resumeReading())
        reads.append(machine.upstreamWritabilityChanged(true))
        reads.append(machine.readRequested())
        reads.append(machine.upstreamWritabilityChanged(false))
        reads.append(machine.readRequested())
        reads.append(machine.upstreamWritabilityChanged(true))
        #expect(reads == [true, false, false, false, true, true, false, false, true])
    }

    @Test("the end of the answer: the connection reused only after a complete request and a keep-alive answer")
    func ending() {
        var machine = Self.relaying()
        _ = machine.upstreamHead(Self.ok())
        guard case .finish(let connection, let reuse, let record, let closeClient) = machine.upstreamEnd() else {
            Issue.record("not finished")
            return
        }
        #expect(connection == 1 && reuse && !closeClient)
        #expect(record.status == 200)

        var early = Self.relaying(.PUT, complete: false)
        _ = early.upstreamHead(Self.ok(.ok, [("Connection", "close")]))
        guard case .finish(_, let reused, _, _) = early.upstreamEnd() else {
            Issue.record("not finished")
            return
        }
        #expect(!reused)
        // The rest of the request is dropped, then the next one is decided.
        guard case .nothing = early.clientRead(.end(nil)), case .decide = early.clientRead(.head(Self.head())) else {
            Issue.record("not back to idle")
            return
        }
    }

    @Test("a client that leaves: its exchange is logged as 499 with no answer out, its connection closed; a late connection is closed")
    func clientLeaves() {
        var machine = Self.relaying()
        let closed = machine.clientClosed()
        #expect(closed?.connection == 1)
        #expect(closed?.record.status == 499)
        guard
            case .close(9) = machine.connectionReady(
                9, for: 1, reused: false, upstreamWritable: true, clientWritable: true, timeout: .seconds(1), now: .now())
        else {
            Issue.record("late connection kept")
            return
        }
    }

    @Test("the router's answer to an upgrade request it was handed ends the connection")
    func passedUpgrade() {
        var machine = Machine(limits: Self.limits)
        let head = Self.head(.GET, [("Upgrade", "h2c")])
        _ = machine.clientRead(.head(head))
        guard case .pass = machine.decided(.pass, for: head, memo: nil) else {
            Issue.record("not passed")
            return
        }
        guard case .replace(.head(let answer)) = machine.routerWrites(.head(Self.ok())) else {
            Issue.record("head not replaced")
            return
        }
        #expect(answer.headers.first(name: "connection") == "close")
        guard case .endAndClose = machine.routerWrites(.end(nil)) else {
            Issue.record("not closed")
            return
        }
        guard case .write = machine.routerWrites(.end(nil)) else {
            Issue.record("closed twice")
            return
        }
    }

    @Test("after a backend read the client is flushed; the backend is read no more only if the client is still full after the flush")
    func flushBeforeStopping() {
        var machine = Self.relaying()
        _ = machine.upstreamHead(Self.ok())
        #expect(machine.upstreamReadComplete())
        #expect(machine.clientFlushed(clientWritable: true) == nil)
        #expect(machine.clientFlushed(clientWritable: false) == 1)
        _ = machine.upstreamEnd()
        #expect(!machine.upstreamReadComplete())
        #expect(machine.clientFlushed(clientWritable: false) == nil)
    }

    @Test("the phases: connecting until a connection is ready, awaiting until the answer starts, streaming or switching after it")
    func phases() {
        var machine = Machine(limits: Self.limits)
        let entry = APIRelay.Entry(requestID: "r1", method: "GET", provider: nil, sessionID: nil)
        let handshake = Self.head(
            .GET,
            [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")])
        guard case .decide(let head, _) = machine.clientRead(.head(handshake)),
            case .start(let acquire) = machine.decided(.upgrade(head, entry), for: head, memo: nil)
        else {
            Issue.record("not started")
            return
        }
        guard case .relaying(_, .connecting) = machine.state else {
            Issue.record("not connecting")
            return
        }
        // No connection: nothing to flush, no backend to read, and no timer to fire.
        #expect(machine.readComplete() == nil)
        guard case .nothing = machine.timerFired(now: .uptimeNanoseconds(0) + .hours(1)) else {
            Issue.record("a timeout while connecting")
            return
        }
        _ = machine.clientRead(.end(nil))
        _ = machine.connectionReady(
            3, for: acquire.id, reused: false, upstreamWritable: true, clientWritable: true, timeout: .seconds(5), now: .uptimeNanoseconds(0))
        guard case .relaying(_, .awaiting(let link, let deadline)) = machine.state else {
            Issue.record("not awaiting")
            return
        }
        #expect(link.connection == 3)
        #expect(deadline == .uptimeNanoseconds(0) + .seconds(5))
        // The client's writability matters to the backend's reading only once the answer streams.
        #expect(machine.clientWritabilityChanged() == nil)
        let accept = HTTPResponseHead(
            version: .http1_1, status: .switchingProtocols,
            headers: ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
        guard case .switching = machine.upstreamHead(accept), case .relaying(_, .switching(let switched)) = machine.state else {
            Issue.record("not switching")
            return
        }
        #expect(switched.connection == 3)
        #expect(machine.clientWritabilityChanged() == 3)
        guard case .tunnel(3, let record) = machine.upstreamEnd(), case .tunnelled = machine.state else {
            Issue.record("not tunnelled")
            return
        }
        #expect(record.status == 101)
    }

    @Test("the connection's memo goes out with each head to decide and comes back with the decision; a refusal keeps it")
    func memo() {
        var machine = Machine(limits: Self.limits)
        let memo = CredentialMemo(
            authorization: "Bearer t", source: .session(epoch: 1), until: .distantFuture, session: APIDecisionTests.session("alice"))
        let entry = APIRelay.Entry(requestID: "r1", method: "GET", provider: nil, sessionID: nil)
        guard case .decide(let head, nil) = machine.clientRead(.head(Self.head())),
            case .answer = machine.decided(.answer(HTTPResponseHead(version: .http1_1, status: .ok), entry), for: head, memo: memo)
        else {
            Issue.record("not answered")
            return
        }
        _ = machine.clientRead(.end(nil))
        guard case .decide(let next, let kept) = machine.clientRead(.head(Self.head())) else {
            Issue.record("not asked")
            return
        }
        #expect(kept?.authorization == "Bearer t")
        _ = machine.decided(.refuse(.invalidSession(), entry), for: next, memo: kept)
        _ = machine.clientRead(.end(nil))
        guard case .decide(_, let still) = machine.clientRead(.head(Self.head())) else {
            Issue.record("not asked")
            return
        }
        #expect(still?.session.identity.subject == "alice")
    }
}
