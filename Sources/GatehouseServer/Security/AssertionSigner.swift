import Foundation
import GatehouseCore
import JWTKit
import Synchronization

/// Signs the `X-Gatehouse-Assertion` JWT (ES256, `kid` in the header) and publishes the JWKS.
///
/// Signing costs about a quarter of the proxy's throughput (measured with `bench/run.sh`), so an assertion is reused
/// per session while more than half of its 60 s lifetime remains.
final class AssertionSigner: Sendable {
    struct SigningKey: Sendable {
        var id: String
        var key: ES256PrivateKey
    }

    private let keys: JWTKeyCollection
    private let currentKeyID: String
    private let issuer: String
    private let audience: String
    private let lifetime: TimeInterval = 60
    private let jwksJSON: String
    private let cache = Mutex<[String: (token: String, issuedAt: Date, version: Int)]>([:])

    /// - Parameter signingKeys: the first signs; all are published for verification.
    init(signingKeys: [SigningKey], issuer: String, audience: String) async throws {
        precondition(!signingKeys.isEmpty, "at least one signing key")
        let collection = JWTKeyCollection()
        var published: [PublishedKeySet.Key] = []
        for signingKey in signingKeys {
            await collection.add(ecdsa: signingKey.key, kid: JWKIdentifier(string: signingKey.id))
            guard let parameters = signingKey.key.parameters else { continue }
            published.append(PublishedKeySet.Key(kid: signingKey.id, x: parameters.x, y: parameters.y))
        }
        keys = collection
        currentKeyID = signingKeys[0].id
        self.issuer = issuer
        self.audience = audience
        jwksJSON = String(decoding: try JSONResponse.encode(PublishedKeySet(keys: published)), as: UTF8.self)
    }

    /// `GET /.well-known/jwks.json`.
    var jwks: String { jwksJSON }

    /// The assertion for a session, reused while fresh and while the session's credential is unchanged.
    /// `audience`: the upstream's (`upstreams:`); `nil` is `backend`'s.
    func assertion(for session: ActiveSession, audience: String? = nil, now: Date) async throws -> String {
        if let cached = cachedAssertion(for: session, audience: audience, now: now) { return cached }
        // Whole seconds: JWT libraries expect integer NumericDates (RFC 7519 allows fractions; many reject them).
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let payload = IdentityAssertionPayload(
            iss: IssuerClaim(value: issuer),
            aud: AudienceClaim(value: audience ?? self.audience),
            sub: SubjectClaim(value: session.identity.subject),
            email: session.identity.email,
            groups: session.identity.groups.isEmpty ? nil : session.identity.groups,
            provider: session.provider,
            sid: session.via == .bearer ? nil : session.id,
            via: session.via == .bearer ? "bearer" : nil,
            iat: IssuedAtClaim(value: issuedAt),
            exp: ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime.rounded(.down))),
            jti: IDClaim(value: RandomToken.make(byteCount: 12))
        )
        let token = try await keys.sign(payload, kid: JWKIdentifier(string: currentKeyID))
        cache.withLock { cache in
            // Bounded: drop everything stale once the cache grows.
            if cache.count > 10_000 { cache = cache.filter { now.timeIntervalSince($0.value.issuedAt) < lifetime / 2 } }
            cache[cacheKey(session, audience)] = (token, now, session.record.credentialVersion)
        }
        return token
    }

    /// The reusable assertion of a session, if there is one; `nil` means one must be signed (``assertion(for:now:)``).
    func cachedAssertion(for session: ActiveSession, audience: String? = nil, now: Date) -> String? {
        cachedAssertionEntry(for: session, audience: audience, now: now)?.token
    }

    /// The same, with the moment from which it is no longer reused.
    func cachedAssertionEntry(for session: ActiveSession, audience: String? = nil, now: Date) -> (token: String, until: Date)? {
        let key = cacheKey(session, audience)
        let cached = cache.withLock { $0[key] }
        guard let cached, cached.version == session.record.credentialVersion else { return nil }
        let until = cached.issuedAt.addingTimeInterval(lifetime / 2)
        return now < until ? (cached.token, until) : nil
    }

    /// Forgets a session's assertions (logout).
    func forget(sessionID: String) {
        cache.withLock { cache in
            cache.removeValue(forKey: sessionID)
            // Other upstreams' audiences: looked for while the cache is small. In a full one they are only ever
            // handed out after the session itself is found, which a logout has ended, and go stale within 30 s.
            if cache.count < 10_000 {
                for key in cache.keys where key.hasPrefix(sessionID + Self.audienceSeparator) { cache.removeValue(forKey: key) }
            }
        }
    }

    /// Between a session id and another upstream's audience in a cache key (no id or audience holds it).
    private static let audienceSeparator = "\u{1F}"

    /// The session's id for `backend`'s audience (the common case: no copy), id and audience for another's.
    private func cacheKey(_ session: ActiveSession, _ audience: String?) -> String {
        guard let audience, audience != self.audience else { return session.id }
        return session.id + Self.audienceSeparator + audience
    }
}
