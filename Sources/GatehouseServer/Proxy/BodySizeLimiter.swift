import GatehouseCore
import NIOCore

/// Passes the client's streamed body through and fails once it exceeds a limit (for bodies without a
/// length). A body that cannot be read (a malformed chunk, the client gone) fails as the client's fault,
/// `invalid_request`, so that it is not taken for the upstream failing.
struct BodySizeLimiter<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let limit: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limit: Int
        var seen = 0

        mutating func next() async throws -> ByteBuffer? {
            let next: ByteBuffer?
            do {
                next = try await base.next()
            } catch {
                throw GatehouseError.invalidRequest("The request body could not be read (malformed chunked encoding, or the client went away).")
            }
            guard let buffer = next else { return nil }
            seen += buffer.readableBytes
            if seen > limit { throw GatehouseError.payloadTooLarge("The request body exceeds \(limit) bytes.") }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), limit: limit)
    }
}
