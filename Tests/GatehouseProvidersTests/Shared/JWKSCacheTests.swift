import Foundation
import GatehouseCore
import JWTKit
import Synchronization
import Testing

@testable import GatehouseProviders

@Suite struct JWKSCacheTests {
    static let url = "https://idp.example.test/jwks"
    let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
    let transport = FakeTransport()
    let keyA = ES256TestKey(kid: "key-a")
    let keyB = ES256TestKey(kid: "key-b")

    func makeCache(over transport: any HTTPTransport) -> JWKSCache {
        JWKSCache(context: ProviderContext(transport: transport, clock: clock.source, publicURL: "https://gate.example.test"))
    }

    /// A cache whose provider answers `replies` in order (then fails like an unreachable one).
    func makeCache(serving replies: FakeTransport.Reply...) -> JWKSCache {
        for reply in replies { transport.enqueue(reply) }
        return makeCache(over: transport)
    }

    /// The `kid` of the key found for `kid`, or nil.
    func found(_ cache: JWKSCache, _ kid: String?, alg: String = "ES256", url: String = Self.url) async throws -> String? {
        try await cache.key(kid: kid, alg: alg, url: url).map { $0.keyIdentifier?.string ?? "(no kid)" }
    }

    @Test("keys are kept for an hour without Cache-Control, then fetched again")
    func defaultMaximumAge() async throws {
        let cache = makeCache(serving: ES256TestKey.jwksReply([keyA]), ES256TestKey.jwksReply([keyA]))
        #expect(try await found(cache, "key-a") == "key-a")
        clock.advance(3599)
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(await cache.fetchCount == 1)
        // A known kid too: the set is simply old.
        clock.advance(1)
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(await cache.fetchCount == 2)
    }

    @Test("Cache-Control max-age sets how long the keys are kept")
    func cacheControlMaximumAge() async throws {
        let cache = makeCache(
            serving: ES256TestKey.jwksReply([keyA], cacheControl: "public, max-age=300, must-revalidate"),
            ES256TestKey.jwksReply([keyA], cacheControl: "max-age=5"))
        #expect(try await found(cache, "key-a") == "key-a")
        clock.advance(299)
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(await cache.fetchCount == 1)
        clock.advance(1)
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(await cache.fetchCount == 2)
        // max-age=5 is raised to the one-minute floor.
        clock.advance(59)
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(await cache.fetchCount == 2)
    }

    @Test("max-age is clamped to 60 s ... 24 h; no-cache/no-store mean the floor; anything else the default")
    func maximumAgeRule() {
        let cases: [(String?, TimeInterval)] = [
            (nil, 3600), ("", 3600), ("public", 3600), ("max-age=120", 120), ("Max-Age=\"900\"", 900), ("max-age=0", 60),
            ("max-age=5, public", 60), ("max-age=604800", 86_400), ("max-age=99999999999999999999999", 86_400),
            ("no-store", 60), ("no-cache, max-age=600", 600), ("max-age=-5", 3600), ("max-age=ten", 3600), ("max-age", 3600),
        ]
        for (header, expected) in cases {
            #expect(JWKSCache.maximumAge(cacheControl: header) == expected, "Cache-Control: \(header ?? "(none)")")
        }
    }

    @Test("an unknown kid forces one refetch, a second one within 10 s does not, after 10 s it may again")
    func forcedRefetchRateLimited() async throws {
        let cache = makeCache(serving: ES256TestKey.jwksReply([keyA]), ES256TestKey.jwksReply([keyA]), ES256TestKey.jwksReply([keyA]))
        #expect(try await found(cache, "key-a") == "key-a")
        clock.advance(1)
        #expect(try await found(cache, "unknown-1") == nil)
        #expect(await cache.fetchCount == 2)
        clock.advance(9.9)
        #expect(try await found(cache, "unknown-2") == nil)
        #expect(try await found(cache, nil, alg: "RS256") == nil, "no RSA key: also no refetch inside the window")
        #expect(await cache.fetchCount == 2)
        clock.advance(0.1)
        #expect(try await found(cache, "unknown-3") == nil)
        #expect(await cache.fetchCount == 3)
    }

    @Test("a rotation is picked up by the refetch a new kid causes")
    func rotation() async throws {
        let cache = makeCache(serving: ES256TestKey.jwksReply([keyA]), ES256TestKey.jwksReply([keyA, keyB]))
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(try await found(cache, "key-b") == "key-b")
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(await cache.fetchCount == 2)
    }

    @Test("without a kid the only key of the algorithm's family is used; the header never picks the key type")
    func selection() async throws {
        let cache = makeCache(serving: ES256TestKey.jwksReply([keyA]), ES256TestKey.jwksReply([keyA, keyB]))
        #expect(try await found(cache, nil) == "key-a")
        // An RSA algorithm never gets the EC key, even with its kid (this refetch finds no RSA key either).
        #expect(try await found(cache, "key-a", alg: "RS256") == nil)
        #expect(await cache.fetchCount == 2)
        // Algorithms that are not JWKS signatures are refused without a fetch.
        for alg in ["HS256", "none", "ES256K"] { #expect(try await found(cache, "key-a", alg: alg) == nil) }
        // Two EC keys and no kid: ambiguous.
        #expect(try await found(cache, nil) == nil)
        #expect(try await found(cache, "key-b") == "key-b")
        #expect(await cache.fetchCount == 2)
    }

    @Test("another jwks_uri (a new discovery document) is fetched, not served from the old one")
    func otherURL() async throws {
        let cache = makeCache(serving: ES256TestKey.jwksReply([keyA]), ES256TestKey.jwksReply([keyB]))
        #expect(try await found(cache, "key-a") == "key-a")
        #expect(try await found(cache, "key-b", url: "https://idp.example.test/keys/2") == "key-b")
        #expect(transport.requests.map(\.url) == [Self.url, "https://idp.example.test/keys/2"])
        #expect(transport.requests.allSatisfy { $0.header("Accept") == "application/json" })
    }

    @Test("fetch failures: unreachable and non-200 are unavailable, a body that is no key set is invalidResponse")
    func failures() async throws {
        let unusable = "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"},{\"kty\":\"EC\",\"use\":\"enc\",\"crv\":\"P-256\",\"x\":\"\",\"y\":\"\"}]}"
        let cache = makeCache(
            serving: .failure(TransportError("refused")), .json("{}", status: 404), .text("<html>", status: 200), .json(unusable))
        await #expect(throws: ProviderError.unavailable("The provider's JWKS could not be fetched. (refused)")) { try await found(cache, "key-a") }
        await #expect(throws: ProviderError.unavailable("The provider's JWKS answered 404.")) { try await found(cache, "key-a") }
        await #expect(throws: ProviderError.invalidResponse("The provider's JWKS is not a key set.")) { try await found(cache, "key-a") }
        // Keys jwt-kit cannot use, or not for signatures, are skipped: an empty set, no error.
        #expect(try await found(cache, nil) == nil)
        #expect(await cache.fetchCount == 4)
    }

    @Test("concurrent lookups share one fetch")
    func concurrentLookupsShareOneFetch() async throws {
        let gate = GatedTransport(reply: ES256TestKey.jwksReply([keyA]))
        let cache = makeCache(over: gate)
        try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try await self.found(cache, "key-a") } }
            // Let every lookup reach the cache while the first fetch is held open.
            while gate.requestCount == 0 { await Task.yield() }
            try await Task.sleep(for: .milliseconds(100))
            gate.open()
            for try await kid in group { #expect(kid == "key-a") }
        }
        #expect(gate.requestCount == 1)
        #expect(await cache.fetchCount == 1)
    }
}

/// A transport whose answers wait until ``open()``; counts requests.
private final class GatedTransport: HTTPTransport {
    private struct State {
        var isOpen = false
        var requests = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let reply: FakeTransport.Reply

    init(reply: FakeTransport.Reply) {
        self.reply = reply
    }

    var requestCount: Int { state.withLock { $0.requests } }

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                state.requests += 1
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
        switch reply {
        case .response(let response): return response
        case .failure(let error): throw error
        }
    }
}
