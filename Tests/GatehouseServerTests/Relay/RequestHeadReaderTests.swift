import GatehouseCore
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``RequestHeadReader``: what it reads and declines, and, on thousands of mutated heads, that whatever it reads
/// NIOHTTP1's decoder reads the same way (method, target, version, every field as named and valued), so that a
/// relay reading heads from the bytes never sees a request other than the one the router would have seen.
@Suite("RequestHeadReader")
struct RequestHeadReaderTests {
    private static let seeds = [
        "GET /v1/api/items?x=1&y=%20 HTTP/1.1\r\nHost: gw.example\r\nAuthorization: Bearer abc.def-_~\r\nAccept: */*\r\n\r\n",
        "POST /v1/api/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
        "DELETE /v1/api/y HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nX-Empty:\r\nX-Spaces: \t a b \t\r\n\r\n",
        "OPTIONS /v1/api/z HTTP/1.1\r\nHost: a\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: PUT\r\n\r\n",
        "HEAD /v1/api/h HTTP/1.1\r\nhost: a\r\nDPoP: eyJ.eyJ.sig\r\nCookie: a=b; c=d\r\n\r\n",
    ]

    @Test("reads a plain head: method, target and each field as sent, the value without the blanks before it, as NIOHTTP1")
    func readsAPlainHead() throws {
        let text = "GET /v1/api/items?q=1 HTTP/1.1\r\nHost: gw\r\nX-Spaces: \t a b \t\r\nX-Empty:\r\n\r\nnext"
        let (outcome, head) = Self.readHead(text)
        guard case .read(let view) = outcome, let head else {
            Issue.record("not read: \(outcome)")
            return
        }
        #expect(view.length == text.utf8.count - 4)
        #expect(head.method == .GET)
        #expect(head.uri == "/v1/api/items?q=1")
        #expect(head.headers.map { [$0.name, $0.value] } == [["Host", "gw"], ["X-Spaces", "a b \t"], ["X-Empty", ""]])
    }

    @Test(
        "declines what NIOHTTP1 must judge: smuggling framings, folds, bare line ends, controls, other versions and forms",
        arguments: [
            "GET /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST /a HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            "POST /a HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
            "POST /a HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
            "GET /a HTTP/1.1\r\nX : a\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: a\nY: b\r\n\r\n",
            "GET /a HTTP/1.1\nHost: a\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: a\rY: b\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: a\u{0}b\r\n\r\n",
            "GET /a HTTP/1.1\r\nX: caf\u{e9}\r\n\r\n",
            "GET /a HTTP/1.0\r\nHost: a\r\n\r\n",
            "GET http://a/b HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET * HTTP/1.1\r\nHost: a\r\n\r\n",
            "get /a HTTP/1.1\r\nHost: a\r\n\r\n",
            "BREW /a HTTP/1.1\r\nHost: a\r\n\r\n",
            "\r\nGET /a HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /a HTTP/1.1\r\n: a\r\n\r\n",
            "GET /a HTTP/1.1\r\nNo-Colon\r\n\r\n",
        ])
    func declines(_ text: String) {
        #expect(RequestHeadReader.read(Array(text.utf8)) == .declined)
    }

    @Test("every proper prefix of a head it reads is incomplete, never declined nor read otherwise")
    func prefixesAreIncomplete() {
        for seed in Self.seeds {
            let bytes = Array(seed.utf8)
            guard case .read(let view) = RequestHeadReader.read(bytes) else {
                Issue.record("seed not read: \(seed)")
                continue
            }
            for end in 0..<view.length {
                #expect(RequestHeadReader.read(Array(bytes[..<end])) == .incomplete, "prefix of \(end) bytes of \(seed)")
            }
        }
    }

    @Test("what it reads of a head too large for the gateway's decoder: nothing")
    func limits() {
        let many = "GET /a HTTP/1.1\r\n" + String(repeating: "X: a\r\n", count: RequestHeadReader.maxFields + 1) + "\r\n"
        #expect(RequestHeadReader.read(Array(many.utf8)) == .declined)
        let long = "GET /a HTTP/1.1\r\nX: " + String(repeating: "a", count: RequestHeadReader.maxHeadBytes) + "\r\n\r\n"
        #expect(RequestHeadReader.read(Array(long.utf8)) == .declined)
    }

    @Test("on 6,000 mutated heads, whatever it reads NIOHTTP1 reads alike")
    func agreesWithNIOHTTP1() throws {
        var random = SeededGenerator(state: 0x6A7E_4011_5E00_0039)
        var (read, declined, disagreements) = (0, 0, [String]())
        for round in 0..<6000 {
            var bytes = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0...(random.next() % 3) { HeadMutator.mutate(&bytes, &random, lines: Self.lines) }
            let (outcome, nio) = Self.readHead(bytes)
            switch outcome {
            case .declined: declined += 1
            case .incomplete:
                // A lane waiting for the rest of a head must not wait for one NIOHTTP1 already has.
                if nio != nil { disagreements.append("incomplete, NIOHTTP1 read: \(String(reflecting: String(decoding: bytes, as: UTF8.self)))") }
            case .read(let view):
                read += 1
                let ours = bytes.withUnsafeBytes { view.requestHead(in: $0) }
                guard let nio else {
                    disagreements.append("NIOHTTP1 refused: \(String(reflecting: String(decoding: bytes, as: UTF8.self)))")
                    continue
                }
                if ours.method != nio.method || ours.uri != nio.uri || ours.version != nio.version
                    || ours.headers.map({ [$0.name, $0.value] }) != nio.headers.map({ [$0.name, $0.value] })
                {
                    disagreements.append(
                        "read otherwise: \(String(reflecting: String(decoding: bytes, as: UTF8.self))): \(ours) against \(nio)")
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, e.g. \(disagreements.prefix(5))")
        // Both sides of the subset are exercised, or the agreement means nothing.
        #expect(read > 1000)
        #expect(declined > 1000)
    }

    // MARK: Helpers

    /// Lines the mutations add among the fields.
    private static let lines = [
        "Transfer-Encoding: chunked\r\n", "Content-Length: 3\r\n", "Content-Length: 0\r\n", " folded\r\n", "X: a\nY: b\r\n",
        "Host: b\r\n", "X-Long: " + String(repeating: "v", count: 300) + "\r\n", "Connection: close\r\n",
    ]

    /// The reader's outcome on `text`, and NIOHTTP1's head of it (`nil` when the decoder refuses it or finds none).
    private static func readHead(_ text: String) -> (RequestHeadReader.Outcome, HTTPRequestHead?) { readHead(Array(text.utf8)) }

    private static func readHead(_ bytes: [UInt8]) -> (RequestHeadReader.Outcome, HTTPRequestHead?) {
        let outcome = RequestHeadReader.read(bytes)
        // The decoder gets the head alone when the reader read one: what follows (a body, the next request) is not
        // the head's business.
        let head: [UInt8] = if case .read(let view) = outcome { Array(bytes[..<view.length]) } else { bytes }
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        do {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
            try channel.writeInbound(ByteBuffer(bytes: head))
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
                if case .head(let read) = part { return (outcome, read) }
            }
        } catch {}
        return (outcome, nil)
    }
}

extension RequestHeadReader {
    /// The reader on an array (tests).
    static func read(_ bytes: [UInt8]) -> Outcome { bytes.withUnsafeBytes { read($0) } }
}
