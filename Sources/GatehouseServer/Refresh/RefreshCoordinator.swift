import Foundation
import GatehouseCore
import Logging
import Prometheus

/// Refreshes provider credentials, one refresh per session at a time.
///
/// Within one instance, concurrent callers join the refresh in flight. Across instances that share a
/// store, a lease in the store elects one refresher and the others wait for the stored credential to
/// change. A caller whose credential is older than the stored one reuses the stored one instead of
/// refreshing again (a request that arrives just after a refresh), so a rotating refresh token is
/// never spent twice.
actor RefreshCoordinator {
    private var inFlight: [String: Task<ActiveSession, any Error>] = [:]
    private let sessions: SessionManager
    private let instanceID = RandomToken.make(byteCount: 12)
    private let leaseDuration: TimeInterval
    private let metrics: GatewayMetrics
    private let logger: Logger

    init(sessions: SessionManager, upstreamTimeout: TimeInterval, metrics: GatewayMetrics, logger: Logger) {
        self.sessions = sessions
        self.leaseDuration = upstreamTimeout + 5
        self.metrics = metrics
        self.logger = logger
    }

    /// A session with a renewed credential.
    /// - Parameters:
    ///   - session: the session as the caller saw it.
    ///   - force: refresh even if another request refreshed a moment ago (`POST /v1/session/refresh`).
    /// - Throws: `reauthentication_required` (the session is ended) or `upstream_unavailable` (kept).
    func refresh(_ session: ActiveSession, provider: any RefreshingProvider, force: Bool) async throws -> ActiveSession {
        if let running = inFlight[session.id] {
            metrics.refresh(provider: session.provider, outcome: "joined")
            return try await running.value
        }
        let task = Task { try await self.perform(session, provider: provider, force: force) }
        inFlight[session.id] = task
        defer { inFlight[session.id] = nil }
        return try await task.value
    }

    private nonisolated func perform(_ seen: ActiveSession, provider: any RefreshingProvider, force: Bool) async throws -> ActiveSession {
        let store = sessions.store
        var machine = StateMachine(
            seenVersion: seen.record.credentialVersion, force: force, deadline: sessions.clock.now().addingTimeInterval(leaseDuration))
        var action = machine.start()
        var latest: ActiveSession?
        do {
            while true {
                switch action {
                case .readStore:
                    latest = try await sessions.reload(id: seen.id)
                    action = machine.storeRead(version: latest?.record.credentialVersion)
                case .pauseThenReadStore:
                    try await Task.sleep(for: .milliseconds(50))
                    action = .readStore
                case .acquireLease:
                    let now = sessions.clock.now()
                    let acquired = try await store.acquireRefreshLease(
                        sessionID: seen.id, owner: instanceID, until: now.addingTimeInterval(leaseDuration), now: now)
                    action = machine.leaseAttempted(acquired: acquired, now: now)
                case .useStored:
                    guard let latest else { throw GatehouseError.invalidSession() }
                    if machine.holdsLease { try? await store.releaseRefreshLease(sessionID: seen.id, owner: instanceID) }
                    return latest
                case .callProvider:
                    guard let latest else { throw GatehouseError.invalidSession() }
                    let result = try await refreshHoldingLease(seen, latest: latest, provider: provider)
                    try? await store.releaseRefreshLease(sessionID: seen.id, owner: instanceID)
                    return result
                case .failSessionEnded:
                    throw GatehouseError.invalidSession()
                case .failTimedOut:
                    throw GatehouseError.upstreamUnavailable("Another gateway instance is still refreshing this session.")
                }
            }
        } catch {
            if machine.holdsLease { try? await store.releaseRefreshLease(sessionID: seen.id, owner: instanceID) }
            throw error
        }
    }

    /// Calls the provider with the credential re-read under the lease and stores the result (compare-and-set).
    private nonisolated func refreshHoldingLease(
        _ seen: ActiveSession, latest: ActiveSession, provider: any RefreshingProvider
    ) async throws -> ActiveSession {
        let credential: Credential
        do {
            credential = try await provider.refresh(latest.credential)
            metrics.refreshes.increment()
            metrics.refresh(provider: seen.provider, outcome: "refreshed")
        } catch let error as ProviderError {
            metrics.refreshFailures.increment()
            let (problem, endsSession) = ErrorMapping.refreshFailure(error)
            metrics.refresh(provider: seen.provider, outcome: endsSession ? "refused" : "failed")
            logger.notice(
                endsSession ? "refresh refused" : "refresh failed",
                metadata: [
                    "event": endsSession ? "refresh_refused" : "refresh_failed", "provider": "\(seen.provider)", "session": "\(seen.id)",
                    "reason": "\(problem.code)", "session_ended": "\(endsSession)",
                ])
            if endsSession { try? await sessions.end(seen.id) }
            throw problem
        }
        guard let updated = try await sessions.replaceCredential(of: latest, with: credential) else {
            throw GatehouseError.invalidSession()
        }
        return updated
    }
}
