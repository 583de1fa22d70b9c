import Foundation
import GatehouseCore
import HTTPTypes

/// Checks DPoP proofs (RFC 9449 §4.3) and binds sessions to the key that signs them.
///
/// A proof is a JWS in the `DPoP` header: `typ` `dpop+jwt`, an asymmetric `alg` of
/// ``DPoPPolicy/algorithms``, the public `jwk` it verifies with; claims `htm` and `htu` naming this request,
/// `iat` within `max_age_seconds`, `jti` never seen before, `ath` = the hash of the session token it
/// accompanies, and the gateway's `nonce` when nonces are required. The signature is swift-crypto's to verify
/// (ES256) or jwt-kit's.
///
/// Replay (`replay`): with `store` a proof's `jti` is recorded in the session store, which every instance
/// shares; with `instance` it is recorded in this process's memory (``DPoPInstanceReplay``), and nonces name the
/// process (``DPoPNonces``), so no other instance — nor this one after a restart — accepts the proof.
struct DPoPVerifier: Sendable {
    static let proofField = HTTPField.Name("DPoP")!
    static let nonceField = HTTPField.Name("DPoP-Nonce")!

    /// The request a proof must name: its method and its URL as the client reached it.
    struct Target: Sendable {
        var method: String
        var url: String
    }

    let policy: DPoPPolicy
    /// `public_url`: the base of every URL a client reaches the gateway's own routes under.
    let publicURL: String
    let store: any SessionStore
    let clock: TimeSource
    let nonces: DPoPNonces
    /// This process's record of accepted proofs, with `replay: instance`.
    private let instanceReplay: DPoPInstanceReplay?
    private let keys = DPoPKeyCache()
    private let headers = DPoPHeaderCache()

    init(policy: DPoPPolicy, publicURL: String, store: any SessionStore, clock: TimeSource, sealingKeys: [CredentialSealer.Key]) {
        self.policy = policy
        self.publicURL = publicURL
        self.store = store
        self.clock = clock
        let perInstance = policy.replay == .instance
        nonces = DPoPNonces(
            sealingKeys: sealingKeys, lifetime: TimeInterval(policy.nonceLifetimeSeconds), instance: perInstance ? DPoPNonces.newInstanceID() : nil)
        instanceReplay = perInstance ? DPoPInstanceReplay(window: Self.recordWindow(policy), now: clock.now()) : nil
    }

    /// The target of a request to one of the gateway's routes: `public_url` and the path as received.
    func target(method: String, path: Substring) -> Target {
        Target(method: method, url: publicURL + path)
    }

    // MARK: Sessions

    /// Whether a session may be used as it was presented: a bound session only as `Authorization: DPoP` with a
    /// proof of this request signed by its key (as a cookie or `Bearer`: 401 `invalid_token`), an unbound one
    /// never as `DPoP`. The proof to spend once the request is decided (`nil`: none is needed); it is not spent here.
    func check(_ session: ActiveSession, _ presented: PresentedCredential) async throws -> DPoPProof? {
        guard let bound = try boundKey(session, presentation: presented.presentation), let target = presented.target else { return nil }
        return try matching(await verify(presented.proofs, target: target, ath: Self.ath(of: presented.token), status: 401), bound: bound)
    }

    /// The same without leaving the caller's thread: `.some(proof)` (the proof to spend, `nil` when none is
    /// needed), or `nil` when the proof's signature must be awaited (``check(_:_:)``). `ath`: the token's
    /// ``ath(of:)`` when the caller kept it (a connection's ``CredentialMemo``), else it is hashed here.
    func checkWithoutWaiting(_ session: ActiveSession, _ presented: PresentedCredential, ath: String? = nil) throws -> DPoPProof?? {
        guard let bound = try boundKey(session, presentation: presented.presentation), let target = presented.target else { return .some(nil) }
        let ath = ath ?? Self.ath(of: presented.token)
        guard let proof = try verifyWithoutWaiting(presented.proofs, target: target, ath: ath, status: 401) else { return nil }
        return .some(try matching(proof, bound: bound))
    }

    /// The presentation rule: the key a proof must be signed with (`nil`: no proof is needed), or the refusal.
    private func boundKey(_ session: ActiveSession, presentation: SessionResolver.Presentation) throws -> String? {
        let bound = session.record.dpopThumbprint
        switch presentation {
        case .cookie, .bearer:
            // Whoever copied a bound token (from a credential file, a log, a proxy) has it without the key:
            // a bound session is taken only with a proof, however else the token comes.
            if bound != nil {
                throw GatehouseError.invalidToken("This session is bound to a key: present it as 'Authorization: DPoP <token>' with a DPoP proof.")
            }
            return nil
        case .dpop:
            guard let bound else {
                throw GatehouseError.invalidToken("This session is not bound to a key: present it as 'Authorization: Bearer <token>'.")
            }
            return bound
        }
    }

    private func matching(_ proof: DPoPProof, bound: String) throws -> DPoPProof {
        guard ConstantTime.equal(proof.thumbprint.utf8, bound.utf8) else {
            throw GatehouseError.invalidDPoPProof("The DPoP proof is signed by another key than the one the session is bound to.")
        }
        return proof
    }

    /// The `ath` a proof must carry with `token` (RFC 9449 §4.2): its SHA-256, base64url.
    static func ath(of token: String) -> String {
        Base64URL.sha256(token)
    }

    // MARK: Sign-ins

    /// The thumbprint a new session is bound to, from the proof of a sign-in request (`POST /v1/session`,
    /// `/assertion`, `/token`); `nil` for a bearer session. Refusals are 400 (RFC 9449 §5).
    func bindingForSignIn(proofs: [String], target: Target) async throws -> String? {
        guard policy.mode != .off else { return nil }
        if proofs.isEmpty {
            if policy.mode == .required {
                throw GatehouseError.invalidDPoPProof("This gateway binds every session to a key: send a DPoP proof with the sign-in.", status: 400)
            }
            return nil
        }
        let proof = try await verify(proofs, target: target, ath: nil, status: 400)
        try await spend(proof, status: 400)
        return proof.thumbprint
    }

    // MARK: Proofs

    /// Every check of RFC 9449 §4.3 but the replay check. `ath`: the ``ath(of:)`` of the token the proof comes
    /// with (`nil` at a sign-in, which has none).
    func verify(_ proofs: [String], target: Target, ath: String?, status: Int) async throws -> DPoPProof {
        let parsed = try parse(proofs, status: status)
        let valid =
            if let key = parsed.header.es256 {
                key.isValidSignature(parsed.signature, signingInput: parsed.signingInput)
            } else {
                (try? await keys.verify(parsed.proof, alg: parsed.header.alg, thumbprint: parsed.header.thumbprint, jwk: parsed.header.jwk)) != nil
            }
        return try checkClaims(parsed, signatureValid: valid, target: target, ath: ath, status: status)
    }

    /// The same checks without leaving the caller's thread (the event loop), for an ES256 proof (its key parsed
    /// with its header); `nil` when ``verify(_:target:ath:status:)`` must be awaited instead (the other
    /// algorithms, verified by jwt-kit).
    func verifyWithoutWaiting(_ proofs: [String], target: Target, ath: String?, status: Int) throws -> DPoPProof? {
        let parsed = try parse(proofs, status: status)
        // An ES256 key is parsed once with its header (``DPoPHeaderCache``); other algorithms are jwt-kit's to await.
        guard let key = parsed.header.es256 else { return nil }
        let valid = key.isValidSignature(parsed.signature, signingInput: parsed.signingInput)
        return try checkClaims(parsed, signatureValid: valid, target: target, ath: ath, status: status)
    }

    /// A proof taken apart, its header checked: what the signature and claim checks read.
    private struct Parsed {
        let proof: String
        let claims: DPoPProofParts.Claims
        let header: DPoPHeaderCache.Checked
        /// The proof's first two parts and the dot between them, in the proof's own bytes.
        let signingInput: Substring.UTF8View
        let signature: Substring.UTF8View.SubSequence
    }

    private func parse(_ proofs: [String], status: Int) throws -> Parsed {
        func refuse(_ detail: String) -> GatehouseError { .invalidDPoPProof(detail, status: status) }
        guard proofs.count == 1, let proof = proofs.first else {
            throw refuse(proofs.isEmpty ? "A DPoP proof is required (the DPoP header)." : "Exactly one DPoP header is allowed.")
        }
        let utf8 = proof.utf8
        guard utf8.count <= 8192, let (headerPart, claimsPart, signature) = Self.compactParts(utf8),
            let claimsBytes = Base64URL.decodedBytes(claimsPart), let claims = DPoPClaimsParser.parse(claimsBytes)
        else { throw refuse("The DPoP proof is not a JWS with a JSON header and claims.") }
        let header: DPoPHeaderCache.Checked
        if let known = headers.checked(headerPart) {
            header = known
        } else {
            header = try checkedHeader(headerPart, status: status)
            headers.keep(headerPart, header)
        }
        return Parsed(
            proof: proof, claims: claims, header: header, signingInput: utf8[..<claimsPart.endIndex], signature: signature)
    }

    /// The three parts of a compact JWS (`header.claims.signature`), `nil` unless there are exactly two dots.
    /// Found with `memchr` in the proof's contiguous bytes, without the array a `split` makes: it runs on every proof.
    private static func compactParts(
        _ utf8: String.UTF8View
    ) -> (Substring.UTF8View, Substring.UTF8View, Substring.UTF8View)? {
        func dotOffsets(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
            guard let base = bytes.baseAddress else { return nil }
            func dot(after start: Int) -> Int? {
                guard start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start) else { return nil }
                return UnsafeRawPointer(found) - UnsafeRawPointer(base)
            }
            guard let first = dot(after: 0), let second = dot(after: first + 1), dot(after: second + 1) == nil else { return nil }
            return (first, second)
        }
        guard let (first, second) = utf8.withContiguousStorageIfAvailable(dotOffsets) ?? Array(utf8).withUnsafeBufferPointer(dotOffsets) else {
            return nil
        }
        let firstDot = utf8.index(utf8.startIndex, offsetBy: first)
        let secondDot = utf8.index(firstDot, offsetBy: second - first)
        return (
            utf8[utf8.startIndex..<firstDot], utf8[utf8.index(after: firstDot)..<secondDot], utf8[utf8.index(after: secondDot)...]
        )
    }

    /// A proof's JOSE header decoded and checked: `typ`, no `crit`, an accepted `alg`, a public key of its family.
    private func checkedHeader(_ encoded: Substring.UTF8View.SubSequence, status: Int) throws -> DPoPHeaderCache.Checked {
        func refuse(_ detail: String) -> GatehouseError { .invalidDPoPProof(detail, status: status) }
        guard let headerData = Base64URL.decode(encoded), let header = try? JSONDecoder().decode(DPoPProofParts.Header.self, from: headerData)
        else { throw refuse("The DPoP proof is not a JWS with a JSON header and claims.") }
        guard header.typ?.lowercased() == "dpop+jwt" else { throw refuse("The DPoP proof's typ must be dpop+jwt.") }
        guard header.crit == nil else { throw refuse("The DPoP proof names critical header extensions (crit), which the gateway does not support.") }
        guard let alg = header.alg, DPoPPolicy.algorithms.contains(alg) else {
            throw refuse("The DPoP proof's alg must be one of \(DPoPPolicy.algorithms.joined(separator: ", ")).")
        }
        guard let key = header.jwk, !key.hasPrivateMembers, case let jwk = key.members, let thumbprint = JWKThumbprint.of(jwk),
            Self.keyFits(jwk, alg: alg)
        else { throw refuse("The DPoP proof's jwk must be a public \(alg) key.") }
        return DPoPHeaderCache.Checked(alg: alg, jwk: jwk, thumbprint: thumbprint, es256: alg == "ES256" ? DPoPES256Key(jwk: jwk) : nil)
    }

    /// The proof, once its signature verified and its claims name this request.
    private func checkClaims(_ parsed: Parsed, signatureValid: Bool, target: Target, ath expected: String?, status: Int) throws -> DPoPProof {
        func refuse(_ detail: String) -> GatehouseError { .invalidDPoPProof(detail, status: status) }
        guard signatureValid else { throw refuse("The DPoP proof's signature does not verify with its jwk.") }
        let claims = parsed.claims
        guard let jti = claims.jti, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw refuse("The DPoP proof needs a jti (at most 256 bytes).")
        }
        guard claims.htm == target.method else { throw refuse("The DPoP proof's htm is not this request's method.") }
        // The same text as the request's URL (what a client usually sends) is that URL: `public_url` and the
        // path the request came with. Only another spelling needs both normalized.
        guard let htu = claims.htu,
            htu == target.url || DPoPTargetURI.normalized(htu).map({ $0 == DPoPTargetURI.normalized(target.url) }) ?? false
        else { throw refuse("The DPoP proof's htu is not this request's URL.") }
        let now = clock.now()
        guard let iat = claims.iat else { throw refuse("The DPoP proof needs an iat.") }
        let age = now.timeIntervalSince1970 - iat
        guard age <= Double(policy.maxAgeSeconds + DPoPPolicy.clockSkewSeconds) else { throw refuse("The DPoP proof is too old (iat).") }
        guard age >= -Double(DPoPPolicy.clockSkewSeconds) else { throw refuse("The DPoP proof is issued in the future (iat).") }
        if let expected {
            guard let ath = claims.ath, ConstantTime.equal(ath.utf8, expected.utf8) else {
                throw refuse("The DPoP proof's ath is not the hash of this session token.")
            }
        }
        if policy.requiresNonce {
            guard let nonce = claims.nonce, nonces.accepts(nonce, now: now) else {
                throw GatehouseError.useDPoPNonce(nonces.issue(now: now), status: status)
            }
        }
        return DPoPProof(thumbprint: parsed.header.thumbprint, jti: jti, issuedAt: Date(timeIntervalSince1970: iat))
    }

    /// Records the proof's `jti` for its key; a second use, here or on another instance, is refused.
    func spend(_ proof: DPoPProof, status: Int) async throws {
        if let spent = spendWithoutWaiting(proof, status: status) { return try spent.get() }
        guard try await store.recordOnce(Self.onceKey(proof), until: spentUntil(proof), now: clock.now()) else {
            throw Self.replayed(status: status)
        }
    }

    /// The same, answered through `completion` (on the thread that finished the store's write): for the
    /// event loop, which hands the record over without a task of its own.
    func spend(_ proof: DPoPProof, status: Int, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        if let spent = spendWithoutWaiting(proof, status: status) { return completion(spent) }
        store.recordOnce(Self.onceKey(proof), until: spentUntil(proof), now: clock.now()) { recorded in
            completion(recorded.flatMap { new in new ? .success(()) : .failure(Self.replayed(status: status)) })
        }
    }

    /// The same on the caller's thread when the record is in memory (`replay: instance`); `nil` when the store
    /// must record it.
    func spendWithoutWaiting(_ proof: DPoPProof, status: Int) -> Result<Void, any Error>? {
        guard let instanceReplay else { return nil }
        let key = DPoPReplayKey(thumbprint: proof.thumbprint, jti: proof.jti)
        return instanceReplay.record(key, now: clock.now()) ? .success(()) : .failure(Self.replayed(status: status))
    }

    /// What the store records of a proof: its key's thumbprint and its `jti`.
    private static func onceKey(_ proof: DPoPProof) -> String {
        "dpop \(proof.thumbprint) \(proof.jti)"
    }

    /// Kept until the proof's iat can no longer pass the age check.
    private func spentUntil(_ proof: DPoPProof) -> Date {
        proof.issuedAt.addingTimeInterval(Self.recordWindow(policy))
    }

    /// How long after its `iat` a proof can still pass the age check (an `iat` up to the skew in the future,
    /// accepted up to `max_age_seconds` plus the skew after it): how long a record must last.
    private static func recordWindow(_ policy: DPoPPolicy) -> TimeInterval {
        TimeInterval(policy.maxAgeSeconds + 2 * DPoPPolicy.clockSkewSeconds)
    }

    private static func replayed(status: Int) -> GatehouseError {
        .invalidDPoPProof("The DPoP proof was already used (jti).", status: status)
    }

    /// A fresh nonce for a client, when nonces are required.
    func freshNonce() -> String? {
        policy.requiresNonce ? nonces.issue(now: clock.now()) : nil
    }

    // MARK: Keys

    /// Whether the key type and curve are those of the algorithm: the header never picks a key family
    /// that the algorithm does not use (RFC 8725 §3.1).
    private static func keyFits(_ jwk: [String: String], alg: String) -> Bool {
        switch (alg, jwk["kty"]) {
        case ("ES256", "EC"): jwk["crv"] == "P-256"
        case ("RS256", "RSA"), ("PS256", "RSA"): true
        case ("EdDSA", "OKP"): jwk["crv"] == "Ed25519"
        default: false
        }
    }
}
