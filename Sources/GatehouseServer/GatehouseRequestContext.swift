import GatehouseCore
public import Hummingbird
import NIOCore

/// Per-request state: Hummingbird's core context, the peer address for `X-Forwarded-For`, and the
/// session once ``SessionMiddleware`` has resolved it.
public struct GatehouseRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address, when known.
    public var remoteAddress: String?
    /// Set by ``SessionMiddleware`` on the routes that need a session.
    var session: ResolvedSession?
    /// The request's id (``RequestIdentifier``), set by ``AccessLogMiddleware``.
    var requestID = ""
    /// What the access-log line reports of the session, filled in by the layers that resolve it.
    var logFields = RequestLogFields()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The resolved session; only routes behind ``SessionMiddleware`` ask for it.
    func requireSession() throws -> ActiveSession {
        guard let session else { throw GatehouseError.invalidSession() }
        return session.session
    }
}
