import GatehouseCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// ``ChunkedBodyScanner``: where a chunked body ends and what its data is, in one piece or byte by byte, what it
/// refuses, and, on thousands of mutated bodies, that wherever it finds the end NIOHTTP1's decoder does too (the
/// next answer on the connection is read right after it) with the same data.
@Suite("ChunkedBodyScanner")
struct ChunkedBodyScannerTests {
    @Test("finds the end and the data, whole or a byte at a time, and leaves what follows alone")
    func findsTheEnd() {
        let body = Array("5\r\nhello\r\n6;name=value;flag\r\n world\r\nA\r\n0123456789\r\n0\r\n\r\n".utf8)
        let next = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        let whole = Self.scan([body + next])
        #expect(whole.step == .ended(at: body.count))
        #expect(whole.data == Array("hello world0123456789".utf8))
        let bytewise = Self.scan(body.map { [$0] })
        #expect(bytewise.step == .ended(at: 1))
        #expect(bytewise.data == whole.data)
        #expect(Self.scan([Array(body.dropLast(1))]).step == .needMore)
    }

    @Test(
        "refuses what it cannot delimit for certain: trailers, bare line ends, signs, spaces, long sizes, quoted extensions",
        arguments: [
            "0\r\nExpires: never\r\n\r\n", "5\r\nhello\n0\r\n\r\n", "5\nhello\r\n0\r\n\r\n", "5\r\nhelloX\r\n0\r\n\r\n", "+5\r\nhello\r\n0\r\n\r\n",
            "5 \r\nhello\r\n0\r\n\r\n", "0x5\r\nhello\r\n0\r\n\r\n", "1000000000000000\r\n", "5;a=\"b\"\r\nhello\r\n0\r\n\r\n",
            "\r\n5\r\nhello\r\n0\r\n\r\n",
            ";\r\n", "5;\r\nhello\r\n0\r\n\r\n", "5;a=\r\nhello\r\n0\r\n\r\n", "5;a==b\r\nhello\r\n0\r\n\r\n", "5;=b\r\nhello\r\n0\r\n\r\n",
            "5;a=b;\r\nhello\r\n0\r\n\r\n", "5;a=b=c\r\nhello\r\n0\r\n\r\n",
        ])
    func refuses(_ text: String) {
        #expect(Self.scan([Array(text.utf8)]).step == .invalid)
    }

    @Test("on 6,000 mutated bodies, wherever it finds the end NIOHTTP1 does, with the same data")
    func agreesWithNIOHTTP1() {
        var random = SeededGenerator(state: 0x6A7E_4011_5E00_0041)
        var (ended, invalid, disagreements) = (0, 0, [String]())
        let next = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        for _ in 0..<6000 {
            var body = Self.body(&random)
            for _ in 0...(random.next() % 3) { Self.mutate(&body, &random) }
            let ours = Self.scan([body])
            let shown = String(reflecting: String(decoding: body, as: UTF8.self))
            switch ours.step {
            case .invalid: invalid += 1
            case .needMore:
                if Self.decode(body + next).ended { disagreements.append("more wanted, NIOHTTP1 ended: \(shown)") }
            case .ended(let end):
                ended += 1
                let nio = Self.decode(Array(body[..<end]) + next)
                if !nio.ended || nio.data != ours.data || nio.nextStatus != 204 {
                    disagreements.append("ended at \(end), NIOHTTP1 otherwise (\(nio)): \(shown)")
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, e.g. \(disagreements.prefix(5))")
        #expect(ended > 500)
        #expect(invalid > 500)
    }

    // MARK: Helpers

    /// What the scanner makes of `pieces` given one after the other: its last step and the data it named.
    private static func scan(_ pieces: [[UInt8]]) -> (step: ChunkedBodyScanner.Step, data: [UInt8]) {
        var scanner = ChunkedBodyScanner()
        var data: [UInt8] = []
        var step = ChunkedBodyScanner.Step.needMore
        for piece in pieces {
            step = piece.withUnsafeBytes { bytes in scanner.scan(bytes) { data += bytes[$0] } }
            if step != .needMore { break }
        }
        return (step, data)
    }

    /// A chunked body of one to four chunks of random sizes (hex in either case, some with extensions).
    private static func body(_ random: inout SeededGenerator) -> [UInt8] {
        var body: [UInt8] = []
        for _ in 0...(random.next() % 4) {
            let size = Int(random.next() % 40) + 1
            let digits = String(size, radix: 16, uppercase: random.next() % 2 == 0)
            let extensions = random.next() % 3 == 0 ? ";ext=\(random.next() % 9)" : ""
            body += Array("\(digits)\(extensions)\r\n".utf8) + (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) } + Array("\r\n".utf8)
        }
        return body + Array("0\r\n\r\n".utf8)
    }

    /// One byte replaced, inserted or removed.
    private static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator) {
        let at = Int(random.next() % UInt64(bytes.count))
        let byte = (HeadMutator.interesting + Array("0123456789abcdefABCDEFxX-+;".utf8)).randomElement(using: &random) ?? 0
        switch random.next() % 3 {
        case 0: bytes[at] = byte
        case 1: bytes.insert(byte, at: at)
        default: bytes.remove(at: at)
        }
    }

    /// What NIOHTTP1's response decoder makes of a chunked answer with `body`, then whatever follows: the data, whether
    /// the answer ended, and the status of the next answer it read.
    private static func decode(_ body: [UInt8]) -> (data: [UInt8], ended: Bool, nextStatus: UInt?) {
        let head = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var result: (data: [UInt8], ended: Bool, nextStatus: UInt?) = ([], false, nil)
        var heads = 0
        for part in ResponseDecoding.parts(of: head + body, after: [.GET, .GET]).parts {
            switch part {
            case .head(let head):
                heads += 1
                if heads == 2 { result.nextStatus = head.status.code }
            case .body(let buffer): if heads == 1 { result.data += Array(buffer.readableBytesView) }
            case .end: if heads == 1 { result.ended = true }
            }
        }
        return result
    }
}
