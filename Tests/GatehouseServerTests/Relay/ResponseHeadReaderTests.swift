import GatehouseCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``ResponseHeadReader``: what it reads and declines, and, on thousands of mutated answers (to `GET` and to
/// `HEAD`), that whatever it reads NIOHTTP1's response decoder (as the relay's backend connections set it up) reads
/// alike: the status, every field, and where the body ends. A body framed by its reading is fed after the head; the
/// decoder must give exactly that body and end the answer there.
@Suite("ResponseHeadReader")
struct ResponseHeadReaderTests {
    private static let seeds = [
        "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\n",
        "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nX-A: b \t\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nX-Empty:\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
        "HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n",
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nSet-Cookie: a=b; Path=/\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n",
        "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3.11\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Name: caf\u{E9}\r\nContent-Length: 1\r\n\r\n",
    ]

    @Test(
        "reads each framing: length, chunked, until close, none for HEAD, 1xx, 204 and 304",
        arguments: [
            ("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", false, ResponseFraming.length(12)),
            ("HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n", false, .chunked),
            ("HTTP/1.1 200 OK\r\nX: y\r\n\r\n", false, .untilClose),
            ("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", true, .bodiless),
            ("HTTP/1.1 100 Continue\r\n\r\n", false, .bodiless),
            ("HTTP/1.1 103 Early Hints\r\nContent-Length: 3\r\n\r\n", false, .bodiless),
            ("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", false, .bodiless),
            ("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", false, .bodiless),
            ("HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\n\r\n", false, .untilClose),
            ("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n", false, .length(3)),
            (
                "HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename*=UTF-8''\u{E9}t\u{E9}.txt\r\nContent-Length: 0\r\n\r\n", false,
                .length(0)
            ),
        ])
    func framing(_ text: String, _ toHEAD: Bool, _ framing: ResponseFraming) {
        guard case .read(let view) = ResponseHeadReader.read(Array(text.utf8), toHEAD: toHEAD) else {
            Issue.record("not read: \(text)")
            return
        }
        #expect(view.framing == framing)
        #expect(view.length == text.utf8.count)
        #expect(view.statusLineEnd == Array(text.utf8).firstIndex(of: UInt8(ascii: "\r")))
    }

    @Test(
        "declines framings a desync hides in, and what is not its subset",
        arguments: [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\nY: b\r\n\r\n",
            "HTTP/1.1 200 OK\nX: a\r\n\r\n",
            "HTTP/1.0 100 Continue\r\n\r\n",
            "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/2.0 200 OK\r\n\r\n",
            "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 099 Nope\r\n\r\n",
            "HTTP/1.1 200 O\u{0}K\r\n\r\n",
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        ])
    func declines(_ text: String) {
        #expect(ResponseHeadReader.read(Array(text.utf8)) == .declined)
    }

    @Test("every proper prefix of an answer's head it reads is incomplete")
    func prefixesAreIncomplete() {
        for seed in Self.seeds {
            let bytes = Array(seed.utf8)
            guard case .read(let view) = ResponseHeadReader.read(bytes) else {
                Issue.record("seed not read: \(seed)")
                continue
            }
            for end in 0..<view.length {
                #expect(ResponseHeadReader.read(Array(bytes[..<end])) == .incomplete, "prefix of \(end) bytes of \(seed)")
            }
        }
    }

    @Test("on 6,000 mutated answers, whatever it reads NIOHTTP1 reads alike, the body's end included")
    func agreesWithNIOHTTP1() throws {
        var random = SeededGenerator(state: 0x6A7E_4011_5E00_0040)
        var (read, declined, disagreements) = (0, 0, [String]())
        for round in 0..<6000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0...(random.next() % 3) { HeadMutator.mutate(&bytes, &random, lines: Self.lines) }
            let toHEAD = round % 5 == 0
            let shown = String(reflecting: String(decoding: bytes, as: UTF8.self)) + (toHEAD ? " to HEAD" : "")
            switch ResponseHeadReader.read(bytes, toHEAD: toHEAD) {
            case .declined: declined += 1
            case .incomplete:
                if Self.decode(bytes, toHEAD: toHEAD, body: [], close: false).head != nil {
                    disagreements.append("incomplete, NIOHTTP1 read: \(shown)")
                }
            case .read(let view):
                read += 1
                // After a `1xx`, its final answer: NIOHTTP1 drops the first and must read the second right after it.
                let informational = view.status < 200
                let body = informational ? (wire: Array(Self.final.utf8), content: [], whole: true) : Self.body(for: view.framing)
                var ours = bytes.withUnsafeBytes { view.responseHead(in: $0) }
                if informational { ours = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "0"]) }
                let nio = Self.decode(Array(bytes[..<view.length]), toHEAD: toHEAD, body: body.wire, close: view.framing == .untilClose)
                guard let head = nio.head else {
                    disagreements.append("NIOHTTP1 refused: \(shown)")
                    continue
                }
                if ours.version != head.version || ours.status != head.status
                    || ours.headers.map({ [$0.name, $0.value] }) != head.headers.map({ [$0.name, $0.value] })
                {
                    disagreements.append("read otherwise: \(shown): \(ours) against \(head)")
                } else if nio.body != body.content || nio.ended != body.whole {
                    disagreements.append("framed otherwise: \(shown) as \(view.framing): body \(nio.body.count) bytes, ended \(nio.ended)")
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, e.g. \(disagreements.prefix(5))")
        #expect(read > 1000)
        #expect(declined > 1000)
    }

    // MARK: Helpers

    private static let final = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
    private static let lines = [
        "Transfer-Encoding: chunked\r\n", "Content-Length: 3\r\n", "Content-Length: 0\r\n", "Transfer-Encoding: gzip, chunked\r\n",
        " folded\r\n", "X: a\nY: b\r\n", "Connection: close\r\n", "Content-Length: 5\r\n",
    ]

    /// A body as its framing sends it (`wire`), what it holds (`content`), and whether that is all of it (a
    /// `Content-Length` above 64 KiB gets its first 64 KiB).
    private static func body(for framing: ResponseFraming) -> (wire: [UInt8], content: [UInt8], whole: Bool) {
        switch framing {
        case .bodiless: ([], [], true)
        case .length(let count):
            (
                Array(repeating: UInt8(ascii: "x"), count: min(count, 65536)), Array(repeating: UInt8(ascii: "x"), count: min(count, 65536)),
                count <= 65536
            )
        case .chunked: (Array("5\r\nhello\r\n4;ext=1\r\n abc\r\n0\r\n\r\n".utf8), Array("hello abc".utf8), true)
        case .untilClose: (Array("until close".utf8), Array("until close".utf8), true)
        }
    }

    /// What NIOHTTP1's response decoder, after a `GET` (or `HEAD`) went out, makes of `head` and `body` (then the end of
    /// input, when `close`): the head, the body's bytes, and whether the answer ended.
    private static func decode(_ head: [UInt8], toHEAD: Bool, body: [UInt8], close: Bool) -> (head: HTTPResponseHead?, body: [UInt8], ended: Bool) {
        let decoded = ResponseDecoding.parts(of: head + body, after: [toHEAD ? .HEAD : .GET], close: close)
        var result: (head: HTTPResponseHead?, body: [UInt8], ended: Bool) = (nil, [], false)
        guard !decoded.refused else { return result }
        for part in decoded.parts {
            switch part {
            case .head(let read): if result.head == nil { result.head = read }
            case .body(let buffer): result.body += Array(buffer.readableBytesView)
            case .end: result.ended = true
            }
        }
        return result
    }
}

extension ResponseHeadReader {
    /// The reader on an array (tests).
    static func read(_ bytes: [UInt8], toHEAD: Bool = false) -> Outcome { bytes.withUnsafeBytes { read($0, toHEAD: toHEAD) } }
}
