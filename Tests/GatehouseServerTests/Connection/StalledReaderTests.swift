import Foundation
import GatehouseServer
import NIOHTTP1
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A client that asks for a large answer and stops reading it (a slow-read attack: each such connection holds a
/// backend connection and buffers for as long as it likes) is closed after `limits.client_send_timeout_seconds`;
/// one that reads slowly but steadily gets its whole answer.
@Suite("Stalled readers")
struct StalledReaderTests {
    /// More than every buffer between the backend and the client can hold (kernel buffers on both connections,
    /// the relay's), so that a client that stops reading holds the answer up.
    private static let answerBytes = 96 * 1_048_576

    @Test("a client that stops reading a large answer has its connection closed after the send timeout")
    func stalledReaderIsClosed() async throws {
        try await RelayFixture.with(cached: false, configure: { $0.clientSendTimeout = 1 }) { fixture in
            let received = try await Self.download(
                port: fixture.port, token: fixture.token, firstReadAfter: 6, pauseBetweenReads: 0, deadline: 30)
            #expect(received.closedEarly, "the gateway kept the connection of a client that read nothing for 6 s")
            #expect(received.bytes < Self.answerBytes)
            // The relay goes on for other calls.
            let call = try await fixture.gateway.http.send(.GET, fixture.gateway.url("/v1/api/after"), headers: fixture.gateway.bearer(fixture.token))
            #expect(call.status == 200)
        }
    }

    @Test("a client that reads slowly but steadily gets the whole answer")
    func slowReaderIsServed() async throws {
        try await RelayFixture.with(cached: false, configure: { $0.clientSendTimeout = 1 }) { fixture in
            // 16 MiB at about 5 MiB/s (a read of up to 256 KiB every 50 ms): the gateway, which sends far faster, is held
            // up all along. The kernel reports a held-up socket writable again once about half its send buffer
            // (4 MiB at most here) is free, so a client must take a couple of MiB per timeout to count as reading:
            // this one takes them in under half a second.
            let received = try await Self.download(
                port: fixture.port, token: fixture.token, bytes: 16 * 1_048_576, receiveBuffer: 262_144, firstReadAfter: 0,
                pauseBetweenReads: 0.05, deadline: 60)
            #expect(!received.closedEarly)
            #expect(received.complete)
        }
    }

    private struct Received: Sendable {
        /// Everything after the request, the head and the chunk framing too: close enough against sizes in MiB.
        var bytes = 0
        var complete = false
        var closedEarly = false
    }

    /// A blocking client on a thread of its own: a receive buffer of `receiveBuffer` (which the kernel doubles),
    /// `GET /v1/api/stream`, the first read after `firstReadAfter` seconds, then reads of up to 256 KiB with `pauseBetweenReads` between them until the chunked
    /// body's end, the connection's end, or the deadline. `bytes` counts what came after the head.
    private static func download(
        port: Int, token: String, bytes: Int = answerBytes, receiveBuffer: Int32 = 16384, firstReadAfter: TimeInterval,
        pauseBetweenReads: TimeInterval, deadline: TimeInterval
    ) async throws -> Received {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try blockingDownload(
                            port: port, token: token, bytes: bytes, receiveBuffer: receiveBuffer, firstReadAfter: firstReadAfter,
                            pauseBetweenReads: pauseBetweenReads, deadline: deadline)
                    })
            }
        }
    }

    private static func blockingDownload(
        port: Int, token: String, bytes: Int, receiveBuffer: Int32, firstReadAfter: TimeInterval, pauseBetweenReads: TimeInterval,
        deadline: TimeInterval
    ) throws -> Received {
        let fd = try RawHTTPConnection.connect(port: port, receiveBuffer: receiveBuffer)
        defer { close(fd) }
        let request = Array(
            "GET /v1/api/stream?bytes=\(bytes)&chunk=65536 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw RawHTTPConnection.Failure(description: "send() failed")
        }
        Thread.sleep(forTimeInterval: firstReadAfter)
        // The chunked body's end: the last chunk, then the empty line.
        let end = Array("\r\n0\r\n\r\n".utf8)
        var tail: [UInt8] = []
        var received = Received()
        var buffer = [UInt8](repeating: 0, count: 262_144)
        let stop = Date().addingTimeInterval(deadline)
        while Date() < stop {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                received.closedEarly = true
                break
            }
            if n < 0 { continue }
            received.bytes += n
            tail = Array((tail + buffer[0..<n]).suffix(end.count))
            if tail == end {
                received.complete = true
                break
            }
            if pauseBetweenReads > 0 { Thread.sleep(forTimeInterval: pauseBetweenReads) }
        }
        return received
    }
}
