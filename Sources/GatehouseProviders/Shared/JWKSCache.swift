import Foundation
import GatehouseCore
import JWTKit

/// A provider's JSON Web Key Set (RFC 7517), fetched through the adapter's transport and cached, with
/// one set of rules for every adapter that verifies JWTs against a `jwks_uri` (`oidc`, `acs`):
///
/// - Keys are kept for the answer's `Cache-Control: max-age`, clamped to ``maximumAgeRange``; without
///   one, for ``defaultMaximumAge`` (`no-cache`/`no-store`: the range's lower end). Older keys are
///   fetched again on the next use.
/// - A token whose `kid` names no cached key (or, without a `kid`, for whose algorithm no single key
///   fits) makes the cache fetch again, so a provider can rotate its signing keys without a gateway
///   restart. Such a forced refetch happens at most once per `forcedRefetchInterval` per cache, so that
///   tokens with made-up `kid`s cannot make the gateway hammer the provider; inside that window the
///   token is simply refused.
/// - Concurrent callers share one fetch. Time comes from the adapter's ``ProviderContext/clock``.
///
/// Key selection follows RFC 8725 §3.1: the algorithm picks the key *type* (never the header alone),
/// keys marked for another `use` or another `alg` are skipped. Signatures are checked by jwt-kit.
actor JWKSCache {
    /// How long keys are kept when the answer says nothing.
    static let defaultMaximumAge: TimeInterval = 3600
    /// The bounds put on a provider's `max-age`: at least a minute, at most a day.
    static let maximumAgeRange: ClosedRange<TimeInterval> = 60...86_400
    /// The shortest time between two forced refetches (unknown `kid`s).
    static let defaultForcedRefetchInterval: TimeInterval = 10

    /// One fetched key set.
    private struct KeySet: Sendable {
        var url: String
        var keys: [JWK]
        var fetchedAt: Date
        var maximumAge: TimeInterval
    }

    private let http: ProviderHTTP
    private let clock: TimeSource
    /// The shortest time between two forced refetches.
    let forcedRefetchInterval: TimeInterval
    private var current: KeySet?
    private var lastForcedRefetch: Date?
    private var inFlight: (url: String, task: Task<KeySet, any Error>)?
    /// How many times the key set was requested from the provider (for tests).
    private(set) var fetchCount = 0

    /// - Parameters:
    ///   - context: the adapter's transport and clock.
    ///   - forcedRefetchInterval: the shortest time between two refetches caused by unknown `kid`s.
    init(context: ProviderContext, forcedRefetchInterval: TimeInterval = JWKSCache.defaultForcedRefetchInterval) {
        self.http = context.http
        self.clock = context.clock
        self.forcedRefetchInterval = forcedRefetchInterval
    }

    /// The verification key for a token header: the key with that `kid`, or without a `kid` the only
    /// key that fits `alg`; nil when the key set (refetched if the rules allow) has none.
    /// - Throws: ``ProviderError/unavailable(_:)`` when the key set cannot be fetched,
    ///   ``ProviderError/invalidResponse(_:)`` when the answer is not a key set.
    func key(kid: String?, alg: String, url: String) async throws -> JWK? {
        guard Self.keyType(for: alg) != nil else { return nil }
        let now = clock.now()
        if let current, current.url == url, (0..<current.maximumAge).contains(now.timeIntervalSince(current.fetchedAt)) {
            if let key = Self.select(from: current.keys, kid: kid, alg: alg) { return key }
            // A key the cached set lacks: the provider may have rotated. At most once per interval.
            if let last = lastForcedRefetch, (0..<forcedRefetchInterval).contains(now.timeIntervalSince(last)) { return nil }
            lastForcedRefetch = now
        }
        return Self.select(from: try await refetch(url).keys, kid: kid, alg: alg)
    }

    /// Fetches the key set, or waits for the fetch of the same URL already under way.
    private func refetch(_ url: String) async throws -> KeySet {
        if let inFlight, inFlight.url == url { return try await inFlight.task.value }
        fetchCount += 1
        let task = Task { try await self.fetch(url) }
        inFlight = (url, task)
        defer { if inFlight?.task == task { inFlight = nil } }
        let keySet = try await task.value
        current = keySet
        return keySet
    }

    private func fetch(_ url: String) async throws -> KeySet {
        let response = try await http.send(ProviderHTTP.jsonRequest(url), unreachable: "The provider's JWKS could not be fetched.")
        guard response.status == 200 else {
            throw ProviderError.unavailable("The provider's JWKS answered \(response.status).")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any], let entries = object["keys"] as? [Any] else {
            throw ProviderError.invalidResponse("The provider's JWKS is not a key set.")
        }
        // Keys of types jwt-kit does not know (oct, encryption keys) are skipped, not fatal.
        let keys = entries.compactMap { entry -> JWK? in
            guard let members = entry as? [String: Any], (members["use"] as? String).map({ $0 == "sig" }) ?? true,
                let data = try? JSONSerialization.data(withJSONObject: members)
            else { return nil }
            return try? JSONDecoder().decode(JWK.self, from: data)
        }
        return KeySet(url: url, keys: keys, fetchedAt: clock.now(), maximumAge: Self.maximumAge(cacheControl: response.header("Cache-Control")))
    }

    /// How long an answer with this `Cache-Control` is kept (see the type's rules).
    static func maximumAge(cacheControl: String?) -> TimeInterval {
        var maxAge: TimeInterval?
        var noCache = false
        for directive in (cacheControl ?? "").split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            switch parts[0].lowercased() {
            case "max-age" where parts.count == 2:
                let value = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                guard !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }) else { break }
                // Digits too many for an Int are "very long" (RFC 9111 §1.2.2).
                maxAge = Int(value).map(TimeInterval.init) ?? maximumAgeRange.upperBound
            case "no-cache", "no-store":
                noCache = true
            default:
                break
            }
        }
        guard let maxAge else { return noCache ? maximumAgeRange.lowerBound : defaultMaximumAge }
        return min(max(maxAge, maximumAgeRange.lowerBound), maximumAgeRange.upperBound)
    }

    /// The key family an algorithm needs: the header never chooses the key type (RFC 8725 §3.1).
    static func keyType(for alg: String) -> JWK.KeyType? {
        switch alg {
        case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512": .rsa
        case "ES256", "ES384", "ES512": .ecdsa
        case "EdDSA": .octetKeyPair
        default: nil
        }
    }

    /// The key with `kid` among those of the algorithm's family, or without a `kid` the only one.
    static func select(from keys: [JWK], kid: String?, alg: String) -> JWK? {
        guard let type = keyType(for: alg) else { return nil }
        let suitable = keys.filter { key in
            key.keyType == type && (key.algorithm == nil || key.algorithm?.rawValue == alg)
        }
        if let kid { return suitable.first { $0.keyIdentifier?.string == kid } }
        return suitable.count == 1 ? suitable[0] : nil
    }

    /// A jwt-kit key collection that verifies with `key` alone, whatever `kid` the token names
    /// (the key was chosen by ``key(kid:alg:url:)``).
    /// - Throws: jwt-kit's error when the key is not usable (a malformed modulus, an unknown curve…).
    static func verifier(for key: JWK) async throws -> JWTKeyCollection {
        var key = key
        key.keyIdentifier = JWKIdentifier(string: "selected")
        let collection = JWTKeyCollection()
        try await collection.add(jwk: key, isDefault: true)
        return collection
    }
}
