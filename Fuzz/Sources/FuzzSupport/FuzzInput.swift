import GatehouseCore

/// libFuzzer's bytes, read the way the targets need them: a selector byte, then text.
public struct FuzzInput {
    public let bytes: UnsafeBufferPointer<UInt8>

    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = UnsafeBufferPointer(start: start, count: count)
    }

    /// The first byte (0 for an empty input): which of a target's entry points to call.
    public var selector: UInt8 { bytes.first ?? 0 }

    /// Everything after the selector, as text (invalid UTF-8 repaired, as a server reading a request would).
    public var text: String { String(decoding: bytes.dropFirst(), as: UTF8.self) }

    /// The whole input as text.
    public var wholeText: String { String(decoding: bytes, as: UTF8.self) }
}

/// A transport that never reaches anything: the targets parse, they do not talk to providers.
public struct NoTransport: HTTPTransport {
    public init() {}
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        throw TransportError("fuzzing: no network")
    }
}
