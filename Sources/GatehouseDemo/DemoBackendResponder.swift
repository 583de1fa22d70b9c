import Crypto
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Answers the demo backend's requests; a plain responder rather than a router so that every method,
/// including unusual ones, reaches the echo.
struct DemoBackendResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let counter: RequestCounter

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        counter.increment()
        let path = request.uri.path
        if request.method == .get, path == "/stream" {
            return stream(query: request.uri.query)
        }
        if request.method == .get, path.hasPrefix("/status/"), let code = Int(path.dropFirst("/status/".count)), (200...599).contains(code) {
            return .json(["status": .number(Double(code))], status: HTTPResponse.Status(code: code))
        }
        return try await echo(request)
    }

    private func echo(_ request: Request) async throws -> Response {
        var hash = SHA256()
        var bodyBytes = 0
        for try await buffer in request.body {
            bodyBytes += buffer.readableBytes
            buffer.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
        }
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        let digest = hash.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        return .json([
            "method": .string(request.method.rawValue),
            "path": .string(request.uri.path),
            "query": .string(request.uri.query ?? ""),
            "headers": .object(headers.mapValues(JSONValue.string)),
            "body_bytes": .number(Double(bodyBytes)),
            "body_sha256": .string(digest),
        ])
    }

    private func stream(query: String?) -> Response {
        var total = 0
        var chunkSize = 16 * 1024
        for (name, value) in FormEncoding.decode(query ?? "") {
            if name == "bytes", let count = Int(value), count >= 0 { total = count }
            if name == "chunk", let size = Int(value), size > 0 { chunkSize = size }
        }
        let size = chunkSize
        let byteCount = total
        let body = ResponseBody { writer in
            // `a`…`z` repeating, cut from one pattern a chunk and 26 bytes long: a chunk starting at byte `n` is the
            // slice at `n % 26` (a byte at a time would make the stream slower than what it tests, in a debug build).
            let patternLength = min(size, byteCount) + 26
            let pattern = ByteBuffer(bytes: (0..<patternLength).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            var written = 0
            while written < byteCount {
                let count = min(size, byteCount - written)
                try await writer.write(pattern.getSlice(at: written % 26, length: count)!)
                written += count
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }
}
