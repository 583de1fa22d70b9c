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

    /// The upstream `/v1/api` forwarded the request to (its name, `backend` for the default).
    private let chosenUpstream = Mutex<String?>(nil)

    /// Records the upstream the request went to.
    func upstream(_ name: String) {
        chosenUpstream.withLock { $0 = name }
    }

    var upstream: String? { chosenUpstream.withLock { $0 } }
    var provider: String? { fields.withLock { $0.provider } }
    var sessionID: String? { fields.withLock { $0.sessionID } }
}
