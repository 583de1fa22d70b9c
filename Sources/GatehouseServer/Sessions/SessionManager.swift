import Foundation
import GatehouseCore

/// Creates, resolves and ends sessions on top of a ``SessionStore``: tokens are hashed, credentials
/// sealed, idle and absolute lifetimes enforced.
struct SessionManager: Sendable {
    let store: any SessionStore
    let sealer: CredentialSealer
    let clock: TimeSource
    let settings: ServerSettings
    /// Called with the id of every session that ends here (logout, replayed code, refused refresh).
    let onEnd: @Sendable (String) -> Void
    let cache = OpenedSessionCache()
    /// The store's synchronous look-up, when it has one (cast once, not per request).
    private let lookup: (any CachedSessionLookup)?

    init(store: any SessionStore, sealer: CredentialSealer, clock: TimeSource, settings: ServerSettings, onEnd: @escaping @Sendable (String) -> Void)
    {
        self.store = store
        self.sealer = sealer
        self.clock = clock
        self.settings = settings
        self.onEnd = onEnd
        lookup = store as? any CachedSessionLookup
    }

    /// Creates a session and returns its token (shown once, never stored); `dpopThumbprint` binds it to a client key.
    func create(
        provider: String, result: LoginResult, id: String = RandomToken.make(byteCount: 16), dpopThumbprint: String? = nil
    ) async throws -> (token: String, session: ActiveSession) {
        let token = SessionToken.make()
        let now = clock.now()
        let record = SessionRecord(
            id: id,
            tokenHash: RandomToken.hash(token),
            provider: provider,
            subject: result.identity.subject,
            identity: try JSONEncoder().encode(result.identity),
            sealedCredential: try sealer.seal(json: result.credential),
            createdAt: now,
            lastSeenAt: now,
            expiresAt: now.addingTimeInterval(min(settings.absoluteLifetime, result.sessionLifetime ?? .infinity)),
            dpopThumbprint: dpopThumbprint,
            providerSessionID: result.identity.providerSessionID
        )
        try await store.insertSession(record)
        return (token, ActiveSession(record: record, identity: result.identity, credential: result.credential))
    }

    /// Resolves a presented token; throws `invalid_session` when unknown, idle too long or past its end.
    func authenticate(token: String) async throws -> ActiveSession {
        guard !token.isEmpty, let record = try await store.session(tokenHash: RandomToken.hash(token)) else {
            throw GatehouseError.invalidSession()
        }
        let now = clock.now()
        guard record.expiresAt > now, record.lastSeenAt.addingTimeInterval(settings.idleTimeout) > now else {
            try? await store.deleteSession(id: record.id)
            throw GatehouseError.invalidSession("The session has expired.")
        }
        if needsTouch(record, now: now) {
            try await store.touchSession(id: record.id, at: now)
        }
        return try open(record)
    }

    /// The session of `token` when everything needed is in memory (the store's cached copy, already opened)
    /// and nothing needs writing; `nil` sends the caller to ``authenticate(token:)``, which decides everything else.
    /// With it, the moment until which the answer stays right unless the store's cache evicts something
    /// (``cacheEpoch``): the session's end, its idle limit and its next recorded activity, whichever is first.
    func cachedSession(token: String, now: Date) -> (session: ActiveSession, until: Date)? {
        guard !token.isEmpty else { return nil }
        return cachedSession(tokenHash: RandomToken.hash(token), now: now)
    }

    /// The same by the token's hash (``RandomToken/hash(_:)``), for a caller that needs the hash for more.
    func cachedSession(tokenHash: String, now: Date) -> (session: ActiveSession, until: Date)? {
        guard let lookup, let record = lookup.cachedSession(tokenHash: tokenHash) else { return nil }
        let until = min(record.expiresAt, record.lastSeenAt.addingTimeInterval(settings.idleTimeout), touchDeadline(record))
        guard now < until, let (identity, credential) = cache.lookup(record) else { return nil }
        return (ActiveSession(record: record, identity: identity, credential: credential), until)
    }

    /// The store cache's ``CachedSessionLookup/evictionEpoch``; `nil` when the store has no synchronous look-up.
    var cacheEpoch: UInt64? { lookup?.evictionEpoch }

    /// Activity is recorded coarsely: a write per request would cost more than the idle timeout needs.
    private func needsTouch(_ record: SessionRecord, now: Date) -> Bool {
        now > touchDeadline(record)
    }

    private func touchDeadline(_ record: SessionRecord) -> Date {
        record.lastSeenAt.addingTimeInterval(min(60, settings.idleTimeout / 10))
    }

    /// The stored state of a session by id (after another request or instance changed it).
    func reload(id: String) async throws -> ActiveSession? {
        guard let record = try await store.session(id: id) else { return nil }
        return try open(record)
    }

    /// Stores a refreshed credential if nobody else did first; returns the session as stored afterwards.
    func replaceCredential(of session: ActiveSession, with credential: Credential) async throws -> ActiveSession? {
        let sealed = try sealer.seal(json: credential)
        if try await store.updateCredential(sessionID: session.id, sealedCredential: sealed, expectedVersion: session.record.credentialVersion) {
            var record = session.record
            record.sealedCredential = sealed
            record.credentialVersion += 1
            return ActiveSession(record: record, identity: session.identity, credential: credential, via: session.via)
        }
        return try await reload(id: session.id)
    }

    func end(_ sessionID: String) async throws {
        cache.remove(sessionID)
        onEnd(sessionID)
        try await store.deleteSession(id: sessionID)
    }

    private func open(_ record: SessionRecord) throws -> ActiveSession {
        if let (identity, credential) = cache.lookup(record) {
            return ActiveSession(record: record, identity: identity, credential: credential)
        }
        do {
            let identity = try JSONDecoder().decode(Identity.self, from: record.identity)
            let credential = try sealer.open(json: Credential.self, from: record.sealedCredential)
            let session = ActiveSession(record: record, identity: identity, credential: credential)
            cache.store(session)
            return session
        } catch {
            // A credential sealed under a key that is no longer configured cannot be used.
            throw GatehouseError.invalidSession("The session cannot be opened; sign in again.")
        }
    }
}
