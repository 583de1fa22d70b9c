import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// One plain TCP connection to a loopback port, for what an HTTP client library will not do: several
/// requests in one write (pipelining), a body that breaks the limits mid-stream, and reading exactly what
/// came back. Blocking I/O on a thread of its own, so the test's executor is never held.
enum RawHTTPConnection {
    struct Response: Sendable {
        var status: Int
        var head: String
        var body: String
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends each of `writes` (with `pause` between them, and each after the first only once `until` holds) on one new
    /// connection, then reads until `responses` answers (framed by `Content-Length` or in chunks) have come, the peer
    /// closes, or `timeout` passes. `halfClose`: the client's side of the connection is shut after the writes.
    static func exchange(
        port: Int, _ writes: [String], pause: TimeInterval = 0, until: (@Sendable () -> Bool)? = nil, responses: Int,
        timeout: TimeInterval = 10, halfClose: Bool = false
    ) async throws -> (responses: [Response], closedByPeer: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try run(port: port, writes, pause: pause, until: until, responses: responses, timeout: timeout, halfClose: halfClose)
                    })
            }
        }
    }

    /// A connection that stays open between requests, as a keep-alive client's does.
    final class KeptAlive: Sendable {
        private let fd: Int32

        init(port: Int) throws {
            fd = try RawHTTPConnection.connect(port: port)
        }

        deinit { close(fd) }

        /// Sends `request` and reads its one answer (framed by `Content-Length`).
        func send(_ request: String, timeout: TimeInterval = 10) async throws -> Response {
            let fd = self.fd
            return try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            let (responses, _) = try RawHTTPConnection.transfer(fd: fd, [request], pause: 0, responses: 1, timeout: timeout)
                            guard let response = responses.first else { throw Failure(description: "no answer on the kept-alive connection") }
                            return response
                        })
                }
            }
        }
    }

    private static func run(
        port: Int, _ writes: [String], pause: TimeInterval, until: (@Sendable () -> Bool)?, responses wanted: Int, timeout: TimeInterval,
        halfClose: Bool
    ) throws -> ([Response], Bool) {
        let fd = try connect(port: port)
        defer { close(fd) }
        return try transfer(fd: fd, writes, pause: pause, until: until, responses: wanted, timeout: timeout, halfClose: halfClose)
    }

    /// A connected blocking socket whose reads give up after 200 ms; `receiveBuffer`: its `SO_RCVBUF`, set before it
    /// connects (the kernel doubles it).
    static func connect(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        // NIO's address, not a `sockaddr_in` filled in here: which clang module the compiler takes that struct from
        // varies between builds of this target, and member import visibility then refuses its fields (`FreePort`).
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let connected = address.withSockAddr { Glibc.connect(fd, $0, socklen_t($1)) }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect() failed")
        }
        var interval = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private static func transfer(
        fd: Int32, _ writes: [String], pause: TimeInterval, until: (@Sendable () -> Bool)? = nil, responses wanted: Int,
        timeout: TimeInterval, halfClose: Bool = false
    ) throws -> ([Response], Bool) {
        for (index, text) in writes.enumerated() {
            if index > 0, pause > 0 { Thread.sleep(forTimeInterval: pause) }
            if index > 0, let until {
                let giveUp = Date().addingTimeInterval(timeout)
                while !until(), Date() < giveUp { Thread.sleep(forTimeInterval: 0.005) }
            }
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let offset = sent
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                // The peer may close while we still write (a refused upload): read what it said.
                if n <= 0 { break }
                sent += n
            }
        }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        var received = [UInt8]()
        var closed = false
        let deadline = Date().addingTimeInterval(timeout)
        var parsed: [Response] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            parsed = parse(received)
            if parsed.count >= wanted { break }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 65536, 0) }
            if n == 0 {
                closed = true
                break
            }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { continue }
                closed = true
                break
            }
            received += chunk[0..<n]
        }
        return (parse(received), closed)
    }

    /// The complete responses at the start of `bytes`.
    private static func parse(_ bytes: [UInt8]) -> [Response] {
        var responses: [Response] = []
        var rest = bytes[...]
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while let end = rest.firstRange(of: separator) {
            let head = String(decoding: rest[rest.startIndex..<end.lowerBound], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            let length =
                lines.dropFirst().compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
            let bodyStart = end.upperBound
            if lines.dropFirst().contains(where: { $0.lowercased().replacingOccurrences(of: " ", with: "") == "transfer-encoding:chunked" }) {
                guard let (body, bodyEnd) = dechunked(rest[bodyStart...]) else { break }
                responses.append(Response(status: status, head: head, body: body))
                rest = rest[bodyEnd...]
                continue
            }
            guard rest.distance(from: bodyStart, to: rest.endIndex) >= length else { break }
            let bodyEnd = rest.index(bodyStart, offsetBy: length)
            responses.append(Response(status: status, head: head, body: String(decoding: rest[bodyStart..<bodyEnd], as: UTF8.self)))
            rest = rest[bodyEnd...]
        }
        return responses
    }

    /// A chunked body at the start of `bytes` (extensions ignored, no trailers): its data and where it ends; `nil`
    /// while incomplete.
    private static func dechunked(_ bytes: ArraySlice<UInt8>) -> (String, ArraySlice<UInt8>.Index)? {
        var data: [UInt8] = []
        var index = bytes.startIndex
        let lineEnd: [UInt8] = Array("\r\n".utf8)
        while true {
            guard let line = bytes[index...].firstRange(of: lineEnd) else { return nil }
            let sizeText = String(decoding: bytes[index..<line.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16) else { return nil }
            index = line.upperBound
            guard bytes.distance(from: index, to: bytes.endIndex) >= size + 2 else { return nil }
            if size == 0 { return (String(decoding: data, as: UTF8.self), index + 2) }
            data += bytes[index..<index + size]
            index += size + 2
        }
    }
}
