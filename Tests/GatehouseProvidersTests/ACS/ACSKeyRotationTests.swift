import Foundation
import GatehouseCore
import Testing

@testable import GatehouseProviders

/// `token_format: jwt` with `jwks_url`: the key set follows the provider's rotations (``JWKSCache``).
@Suite struct ACSKeyRotationTests {
    let clock = TestClock(ACSVectors.before)
    let transport = FakeTransport()
    let keyA = ES256TestKey(kid: "key-a")
    let keyB = ES256TestKey(kid: "key-b")

    /// A `jwks_url` relying party whose key set answers are `keySets`, in order.
    func makeProvider(serving keySets: [ES256TestKey]...) throws -> ACSProvider {
        for keys in keySets { transport.enqueue(ES256TestKey.jwksReply(keys)) }
        return try ACSProviderTests.make(ACSProviderTests.jwksSettings, transport: transport, clock: clock.source)
    }

    /// Claims ACS would issue for `subject`, valid for two days from the start of the test.
    func claims(_ subject: String) -> String {
        let exp = Int(ACSVectors.before.timeIntervalSince1970) + 2 * 86_400
        return "{\"sub\":\"\(subject)\",\"aud\":\"\(ACSVectors.audience)\",\"iss\":\"\(ACSVectors.issuer)\",\"exp\":\(exp)}"
    }

    /// How many times the key set was requested.
    var jwksFetches: Int { transport.requests.filter { $0.url == ACSProviderTests.jwksURL }.count }

    /// The refusal code of `token`, or nil when it is accepted.
    func refusal(_ provider: ACSProvider, _ token: String) async -> String? {
        do {
            _ = try await provider.validate(token)
            return nil
        } catch let failure as ACSFailure {
            return failure.code
        } catch {
            return "\(error)"
        }
    }

    @Test("a JWT signed by the rotated key is accepted by the same provider; the retired key then is not")
    func rotatedKeyAccepted() async throws {
        let provider = try makeProvider(serving: [keyA], [keyB])
        #expect(try await provider.validate(keyA.sign(claims("u-a"))).identity.subject == "u-a")
        #expect(jwksFetches == 1)

        // ACS rotates: the key set now holds B only. No restart, no new provider.
        clock.advance(30)
        #expect(try await provider.validate(keyB.sign(claims("u-b"))).identity.subject == "u-b")
        #expect(jwksFetches == 2)
        // A token of the retired key names a kid the fresh set lacks; a refetch so soon is not allowed.
        clock.advance(1)
        #expect(await refusal(provider, try keyA.sign(claims("u-a"))) == "invalid_signature")
        #expect(jwksFetches == 2)
    }

    @Test("unknown kids refetch at most once per 10 s, however many tokens name them")
    func unknownKidRateLimited() async throws {
        let stranger = ES256TestKey(kid: "made-up")
        let provider = try makeProvider(serving: [keyA], [keyA], [keyA])
        #expect(try await provider.validate(keyA.sign(claims("u-a"))).identity.subject == "u-a")
        #expect(jwksFetches == 1)

        // The first unknown kid refetches (it may be a rotation), and is still refused.
        clock.advance(1)
        #expect(await refusal(provider, try stranger.sign(claims("u-x"))) == "invalid_signature")
        #expect(jwksFetches == 2)
        // More unknown kids inside the window: refused without asking ACS again.
        for index in 0..<20 {
            clock.advance(0.4)
            #expect(await refusal(provider, try stranger.sign(claims("u-x"), kid: "random-\(index)")) == "invalid_signature")
        }
        #expect(jwksFetches == 2)
        // Known keys keep working meanwhile.
        #expect(try await provider.validate(keyA.sign(claims("u-a"))).identity.subject == "u-a")
        #expect(jwksFetches == 2)
        // Once the window has passed, an unknown kid may refetch again.
        clock.advance(10)
        #expect(await refusal(provider, try stranger.sign(claims("u-x"))) == "invalid_signature")
        #expect(jwksFetches == 3)
    }

    @Test("after the maximum age (1 h without Cache-Control) the keys are fetched again")
    func refetchedAfterMaximumAge() async throws {
        let provider = try makeProvider(serving: [keyA], [keyB])
        #expect(try await provider.validate(keyA.sign(claims("u-a"))).identity.subject == "u-a")
        clock.advance(3599)
        #expect(try await provider.validate(keyA.sign(claims("u-a"))).identity.subject == "u-a")
        #expect(jwksFetches == 1)
        // Past the hour the set is fetched again, even for a known kid: A is gone from the new set.
        clock.advance(2)
        #expect(await refusal(provider, try keyA.sign(claims("u-a"))) == "invalid_signature")
        #expect(jwksFetches == 2)
        #expect(try await provider.validate(keyB.sign(claims("u-b"))).identity.subject == "u-b")
        #expect(jwksFetches == 2)
    }

    @Test("a key set that cannot be fetched makes the provider unavailable, not the token invalid")
    func unreachableKeySet() async throws {
        transport.enqueue(.failure(TransportError("connection refused")))
        transport.enqueue(.json("{}", status: 503))
        let provider = try makeProvider()
        await #expect(throws: ProviderError.unavailable("The provider's JWKS could not be fetched. (connection refused)")) {
            try await provider.validate(keyA.sign(claims("u-a")))
        }
        await #expect(throws: ProviderError.unavailable("The provider's JWKS answered 503.")) {
            try await provider.validate(keyA.sign(claims("u-a")))
        }
        #expect(jwksFetches == 2)
    }
}
