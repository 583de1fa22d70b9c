import Foundation
import GatehouseCore
import Synchronization

/// Fetches and caches the issuer's discovery document: `{issuer}/.well-known/openid-configuration`,
/// else RFC 8414 `/.well-known/oauth-authorization-server` (path appended after it). A document is
/// used for its TTL; a failure is remembered for a few seconds so that logins do not hammer the provider,
/// and a stale document keeps serving while the provider is unreachable.
final class OIDCDiscovery: Sendable {
    private struct State {
        var metadata: OIDCProviderMetadata?
        var fetchedAt: Date?
        var failure: (error: ProviderError, at: Date)?
        var fetches = 0
    }

    static let failureRetryInterval: TimeInterval = 5

    let configuration: OIDCProvider.Configuration
    let context: ProviderContext
    private let state = Mutex(State())

    init(configuration: OIDCProvider.Configuration, context: ProviderContext) {
        self.configuration = configuration
        self.context = context
    }

    /// The last good document, however old (for synchronous callers such as the logout URL).
    var cached: OIDCProviderMetadata? { state.withLock { $0.metadata } }

    /// How many discovery fetches were made (for tests).
    var fetchCount: Int { state.withLock { $0.fetches } }

    /// A fresh document, fetched when the cached one is older than the TTL.
    func current() async throws -> OIDCProviderMetadata {
        let now = context.clock.now()
        let decision: Result<OIDCProviderMetadata, ProviderError>? = state.withLock { state in
            if let metadata = state.metadata, let fetchedAt = state.fetchedAt, now.timeIntervalSince(fetchedAt) < configuration.discoveryTTL {
                return .success(metadata)
            }
            if let failure = state.failure, now.timeIntervalSince(failure.at) < Self.failureRetryInterval {
                return state.metadata.map { .success($0) } ?? .failure(failure.error)
            }
            state.fetches += 1
            return nil
        }
        if let decision { return try decision.get() }
        do {
            let metadata = try await fetch()
            state.withLock {
                $0.metadata = metadata
                $0.fetchedAt = now
                $0.failure = nil
            }
            return metadata
        } catch let error as ProviderError {
            let stale = state.withLock { state -> OIDCProviderMetadata? in
                state.failure = (error, now)
                return state.metadata
            }
            if let stale, case .unavailable = error { return stale }
            throw error
        }
    }

    private func fetch() async throws -> OIDCProviderMetadata {
        let issuer = configuration.issuer.hasSuffix("/") ? String(configuration.issuer.dropLast()) : configuration.issuer
        var urls = [issuer + "/.well-known/openid-configuration"]
        if let components = URLComponents(string: issuer), let scheme = components.scheme, let host = components.host {
            let port = components.port.map { ":\($0)" } ?? ""
            urls.append("\(scheme)://\(host)\(port)/.well-known/oauth-authorization-server\(components.path)")
        }
        var lastError = ProviderError.unavailable("Discovery failed.")
        for url in urls {
            let response = try await context.http.send(
                ProviderHTTP.jsonRequest(url), unreachable: "The discovery document at \(url) could not be fetched.",
                serverError: { "Discovery at \(url) answered \($0)." })
            guard response.status == 200 else {
                lastError = .unavailable("Discovery at \(url) answered \(response.status).")
                continue
            }
            let document = try ProviderHTTP.jsonObject(of: response, otherwise: "The discovery document at \(url) is not a JSON object.")
            return try OIDCProviderMetadata(document: .object(document), configuration: configuration)
        }
        throw lastError
    }
}
