import Synchronization

/// What the inner layers of the router learn about a request that its access-log line reports: the session's
/// id and provider. A reference, because the request context is a value that each layer passes on (the
/// access log, outermost, would not see what an inner layer sets on its copy).
final class RequestLogFields: Sendable {
    private let fields = Mutex<(provider: String?, sessionID: String?)>((nil, nil))

    /// Records the session the request was made with.
    func session(provider: String, id: String) {
        fields.withLock { $0 = (provider, id) }
    }

    var provider: String? { fields.withLock { $0.provider } }
    var sessionID: String? { fields.withLock { $0.sessionID } }
}
