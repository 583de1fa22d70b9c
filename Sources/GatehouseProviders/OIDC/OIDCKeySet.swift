import Foundation
import GatehouseCore
import JWTKit
import Synchronization

/// The provider's JWKS, cached; fetched again when a token names a `kid` it does not hold, at most once
/// per `refetchInterval`, so that the provider can rotate keys without a gateway restart while tokens with
/// made-up `kid`s cannot make the gateway fetch on every request.
final class OIDCKeySet: Sendable {
    private struct State {
        var uri: String?
        var keys: [JWK] = []
        var fetchedAt: Date?
        var lastUnknownKidFetch: Date?
        var fetches = 0
    }

    /// A JWKS older than this is fetched again on the next use.
    static let maximumAge: TimeInterval = 3600

    let context: ProviderContext
    let refetchInterval: TimeInterval
    private let state = Mutex(State())

    init(context: ProviderContext, refetchInterval: TimeInterval) {
        self.context = context
        self.refetchInterval = refetchInterval
    }

    /// How many JWKS fetches were made (for tests).
    var fetchCount: Int { state.withLock { $0.fetches } }

    /// The verification key for a token header: by `kid`, or the only suitable key when there is none.
    func key(kid: String?, alg: String, uri: String) async throws -> JWK {
        let now = context.clock.now()
        let cached = state.withLock { state -> [JWK]? in
            guard state.uri == uri, let fetchedAt = state.fetchedAt, now.timeIntervalSince(fetchedAt) < Self.maximumAge else { return nil }
            return state.keys
        }
        var keys: [JWK]
        if let cached {
            keys = cached
        } else {
            keys = try await fetch(uri: uri, at: now)
        }
        if let key = Self.select(from: keys, kid: kid, alg: alg) { return key }
        let mayRefetch = state.withLock { state -> Bool in
            guard cached != nil, kid != nil else { return false }
            if let last = state.lastUnknownKidFetch, now.timeIntervalSince(last) < refetchInterval { return false }
            state.lastUnknownKidFetch = now
            return true
        }
        if mayRefetch {
            keys = try await fetch(uri: uri, at: now)
            if let key = Self.select(from: keys, kid: kid, alg: alg) { return key }
        }
        throw ProviderError.rejected(
            code: "invalid_id_token_signature", description: "The provider's JWKS has no \(alg) key\(kid.map { " with kid '\($0)'" } ?? "").")
    }

    private func fetch(uri: String, at now: Date) async throws -> [JWK] {
        state.withLock { $0.fetches += 1 }
        let response: TransportResponse
        do {
            response = try await context.transport.send(TransportRequest(url: uri, headers: [("Accept", "application/json")]))
        } catch {
            throw ProviderError.unavailable("The provider's JWKS could not be fetched.")
        }
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
        state.withLock { state in
            state.uri = uri
            state.keys = keys
            state.fetchedAt = now
        }
        return keys
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

    static func select(from keys: [JWK], kid: String?, alg: String) -> JWK? {
        guard let type = keyType(for: alg) else { return nil }
        let suitable = keys.filter { key in
            key.keyType == type && (key.algorithm == nil || key.algorithm?.rawValue == alg)
        }
        if let kid { return suitable.first { $0.keyIdentifier?.string == kid } }
        return suitable.count == 1 ? suitable[0] : nil
    }
}
