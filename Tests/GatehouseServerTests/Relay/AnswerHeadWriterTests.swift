import GatehouseCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``AnswerHeadWriter``: on thousands of mutated answers, the head it writes from the bytes is the head the relay
/// writes from NIOHTTP1's parts (``APIRelay/clientHead(of:)``, `X-Request-Id`, `Connection: close`), as a client's
/// NIOHTTP1 reads both: the same status and fields, hop-by-hop ones dropped, those `Connection` lists too.
@Suite("AnswerHeadWriter")
struct AnswerHeadWriterTests {
    private static let seeds = [
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 5\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n",
        "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nConnection: X-Secret, close\r\nX-Secret: s\r\nX-A: b\r\n\r\n",
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nProxy-Authenticate: Basic\r\nTrailer: X\r\nUpgrade: h2c\r\nTE: trailers\r\n\r\n",
        "HTTP/1.1 200 OK\r\nConnection: , ,keep-alive ,\tx-a\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 1\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\nProxy-Connection: keep-alive\r\n\r\n",
    ]
    private static let lines = [
        "Connection: x-b\r\n", "X-B: hidden\r\n", "Keep-Alive: 1\r\n", "Proxy-Connection: keep-alive\r\n", "Transfer-Encoding: chunked\r\n",
        "Content-Length: 3\r\n", "Set-Cookie: a=b\r\n",
    ]

    @Test("drops what belongs to the backend's connection and keeps the chunks' framing")
    func dropsHopByHop() throws {
        let head = try #require(Self.written(Self.seeds[1], requestID: "r1", close: false))
        #expect(head.headers.map { [$0.name, $0.value] } == [["Transfer-Encoding", "chunked"], ["X-A", "b"], ["X-Request-Id", "r1"]])
        let closing = try #require(Self.written(Self.seeds[0], requestID: "r2", close: true))
        #expect(
            closing.headers.map { [$0.name, $0.value] } == [
                ["Server", "nginx"], ["Content-Length", "5"], ["X-Request-Id", "r2"], ["Connection", "close"],
            ])
    }

    @Test("on 3,000 mutated answers, the head written from the bytes is the one written from NIOHTTP1's parts")
    func agreesWithTheRelaysRules() throws {
        var random = SeededGenerator(state: 0x6A7E_4011_5E00_0042)
        var (compared, disagreements) = (0, [String]())
        for round in 0..<3000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0...(random.next() % 3) { HeadMutator.mutate(&bytes, &random, lines: Self.lines) }
            guard case .read(let view) = ResponseHeadReader.read(bytes), view.status >= 200 else { continue }
            let close = round % 2 == 0
            let shown = String(reflecting: String(decoding: bytes, as: UTF8.self))
            guard let upstream = Self.decode(Array(bytes[..<view.length])) else {
                disagreements.append("NIOHTTP1 refused what the reader read: \(shown)")
                continue
            }
            var expected = APIRelay.clientHead(of: upstream)
            expected.headers.add(name: "X-Request-Id", value: "rid")
            if close { expected.headers.add(name: "Connection", value: "close") }
            var buffer = ByteBuffer()
            bytes.withUnsafeBytes { AnswerHeadWriter.write(view, of: $0, requestID: "rid", close: close, into: &buffer) }
            guard let written = Self.decode(Array(buffer.readableBytesView)) else {
                disagreements.append("NIOHTTP1 refused the written head of \(shown)")
                continue
            }
            compared += 1
            let chunked = written.headers["transfer-encoding"].map { $0.lowercased() } == ["chunked"]
            if written.status != expected.status || Self.fields(written) != Self.fields(expected)
                || chunked != (view.framing == .chunked || view.framing == .untilClose)
            {
                disagreements.append("\(shown): wrote \(written.headers), the relay's rules \(expected.headers)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, e.g. \(disagreements.prefix(5))")
        #expect(compared > 1000)
    }

    // MARK: Helpers

    /// The fields but `Transfer-Encoding`, which NIOHTTP1's encoder would set for a chunked body the relay passes on
    /// and for one that ends with the connection (sent in chunks).
    private static func fields(_ head: HTTPResponseHead) -> [[String]] {
        head.headers.filter { $0.name.lowercased() != "transfer-encoding" }.map { [$0.name, $0.value] }
    }

    private static func written(_ text: String, requestID: String, close: Bool) -> HTTPResponseHead? {
        let bytes = Array(text.utf8)
        guard case .read(let view) = ResponseHeadReader.read(bytes) else { return nil }
        var buffer = ByteBuffer()
        bytes.withUnsafeBytes { AnswerHeadWriter.write(view, of: $0, requestID: requestID, close: close, into: &buffer) }
        return decode(Array(buffer.readableBytesView))
    }

    /// NIOHTTP1's reading of an answer's head (after a `GET`).
    private static func decode(_ head: [UInt8]) -> HTTPResponseHead? {
        let decoded = ResponseDecoding.parts(of: head)
        guard !decoded.refused else { return nil }
        for case .head(let read) in decoded.parts { return read }
        return nil
    }
}
