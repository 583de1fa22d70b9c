import GatehouseCore
import Logging
import NIOCore
import NIOHTTP1
import Prometheus

/// How a request on the lane ends: its answer's end, the relay's own problem answers (502, 504), a failure once the
/// answer started, the retry of a lost request; and the access-log line of each.
extension LaneFront {
    /// The answer's last byte was passed on; `leftOver`: the backend sent more than its answer.
    func answerEnded(_ exchange: LaneExchange, leftOver: Bool, context: ChannelHandlerContext) {
        finish(exchange, reuse: exchange.upstreamKeepAlive && !leftOver, context: context)
    }

    func finish(_ exchange: LaneExchange, reuse: Bool, context: ChannelHandlerContext) {
        self.exchange = nil
        if let connection = exchange.connection {
            if reuse { exchange.pool.release(connection) } else { connection.close() }
        }
        record(exchange, status: exchange.status)
        answerDone(exchange, context: context)
    }

    /// The backend failed after part of the answer went out.
    func abandon(_ exchange: LaneExchange) {
        self.exchange = nil
        exchange.connection?.close()
        upstreamFailed(exchange)
        record(exchange, status: exchange.status)
        if let context { cut(context: context) }
    }

    /// The request goes out again on a new connection.
    func retry(_ exchange: LaneExchange) {
        acquire(for: exchange, fresh: true)
    }

    /// No connection could be made, or it was lost before any answer: 502.
    func unreachable(_ exchange: LaneExchange, _ error: any Error) {
        relay.logger.warning("upstream request failed", metadata: ["upstream": "\(redacted(exchange))", "error": "\(error)"])
        upstreamFailed(exchange)
        fail(exchange, UpstreamProtocol.Failure.unreachable.error)
    }

    /// The backend sent what the lane cannot pass on (an answer head outside its reader's subset, a broken chunk):
    /// 502 before the answer started, else the client's connection or stream ends.
    func broken(_ exchange: LaneExchange, reason: String) {
        relay.logger.warning(
            "\(reason); its connection was closed", metadata: ["upstream": "\(redacted(exchange))", "request_id": "\(exchange.entry.requestID)"])
        guard !exchange.answerStarted else {
            abandon(exchange)
            return
        }
        upstreamFailed(exchange)
        fail(exchange, UpstreamProtocol.Failure.unreachable.error)
    }

    /// The backend did not start its answer within the upstream timeout: 504.
    func timedOut(_ exchange: LaneExchange) {
        upstreamFailed(exchange)
        fail(exchange, UpstreamProtocol.Failure.timeout.error)
    }

    /// Ends the exchange with the relay's problem answer for `error`.
    private func fail(_ exchange: LaneExchange, _ error: GatehouseError) {
        guard let context else { return }
        self.exchange = nil
        exchange.connection?.close()
        record(exchange, status: error.status)
        writeProblem(error, exchange, context: context)
    }

    /// The relay's problem answer for `error` to `exchange`'s request: its head (``APIRelay/problemHead(_:bodyLength:close:requestID:)``
    /// with HSTS when the gateway sets it) and its body.
    func problemAnswer(_ error: GatehouseError, _ exchange: LaneExchange, close: Bool) -> (head: HTTPResponseHead, body: ByteBuffer) {
        let requestID = exchange.entry.requestID
        let body = Problem.body(error, requestID: requestID)
        var head = relay.problemHead(error, bodyLength: body.readableBytes, close: close, requestID: requestID)
        if let hsts { head.headers.replaceOrAdd(name: "Strict-Transport-Security", value: hsts) }
        return (head, body)
    }

    private func upstreamFailed(_ exchange: LaneExchange) {
        relay.metrics.upstreamErrors.increment()
        relay.metrics.upstreamFailed(APIRelay.label(exchange.entry.upstream))
    }

    /// The exchange's access-log line (and its trace's end).
    func record(_ exchange: LaneExchange, status: Int) {
        relay.recordRelayed(exchange.entry, status: status, started: exchange.started)
    }

    /// The upstream URL without credentials or query, for log lines.
    private func redacted(_ exchange: LaneExchange) -> String {
        exchange.entry.upstream?.relayTarget?.redacted ?? APIRelay.label(exchange.entry.upstream)
    }
}
