import Foundation
import GatehouseCore
import Synchronization

/// An `HTTPTransport` that records every request and answers with scripted replies, in order.
/// A request without a scripted reply fails like an unreachable provider.
final class FakeTransport: HTTPTransport {
    enum Reply: Sendable {
        case response(TransportResponse)
        case failure(TransportError)

        /// A JSON answer.
        static func json(_ body: String, status: Int = 200) -> Reply {
            .response(TransportResponse(status: status, headers: [("Content-Type", "application/json")], body: Data(body.utf8)))
        }

        /// A non-JSON answer.
        static func text(_ body: String, status: Int, contentType: String = "text/html") -> Reply {
            .response(TransportResponse(status: status, headers: [("Content-Type", contentType)], body: Data(body.utf8)))
        }
    }

    private struct State {
        var replies: [Reply]
        var requests: [TransportRequest] = []
    }

    private let state: Mutex<State>

    init(_ replies: [Reply] = []) {
        state = Mutex(State(replies: replies))
    }

    /// Every request sent so far, in order.
    var requests: [TransportRequest] { state.withLock { $0.requests } }

    func enqueue(_ reply: Reply) {
        state.withLock { $0.replies.append(reply) }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let reply = state.withLock { state -> Reply? in
            state.requests.append(request)
            return state.replies.isEmpty ? nil : state.replies.removeFirst()
        }
        switch reply {
        case .response(let response)?: return response
        case .failure(let error)?: throw error
        case nil: throw TransportError("FakeTransport: no scripted reply for \(request.method) \(request.url)")
        }
    }
}

extension TransportRequest {
    /// The first header of that name, case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The form body as ordered pairs.
    var formPairs: [(String, String)] {
        FormEncoding.decode(String(decoding: body ?? Data(), as: UTF8.self))
    }

    /// The form body as a dictionary (last value wins).
    var form: [String: String] {
        Dictionary(formPairs, uniquingKeysWith: { _, last in last })
    }

    /// The body as text.
    var bodyText: String { String(decoding: body ?? Data(), as: UTF8.self) }
}
