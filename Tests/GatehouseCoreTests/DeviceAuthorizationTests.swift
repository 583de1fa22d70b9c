import Foundation
import GatehouseCore
import Testing

@Suite struct DeviceAuthorizationTests {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)
    static let result = LoginResult(identity: Identity(subject: "alice"), credential: Credential(accessToken: "at", issuedAt: start))

    static func pending(interval: Int = 5) -> DeviceAuthorization {
        DeviceAuthorization(
            userCodeHash: UserCode.hash("BCDFGHJK"), provider: nil, dpopThumbprint: nil, clientAddress: "192.0.2.7", requestedAt: start,
            lifetime: 600, interval: interval)
    }

    @Test("pending: authorization_pending at the interval, slow_down sooner, and each slow_down adds 5 seconds")
    func polling() {
        var authorization = Self.pending()
        let outcome1 = authorization.poll(at: Self.start.addingTimeInterval(5))
        #expect(outcome1 == .authorizationPending)
        let outcome2 = authorization.poll(at: Self.start.addingTimeInterval(10))
        #expect(outcome2 == .authorizationPending)
        let outcome3 = authorization.poll(at: Self.start.addingTimeInterval(12))
        #expect(outcome3 == .slowDown)
        #expect(authorization.interval == 10)
        // 9 s after the last poll: still too soon for the grown interval.
        let outcome4 = authorization.poll(at: Self.start.addingTimeInterval(21))
        #expect(outcome4 == .slowDown)
        #expect(authorization.interval == 15)
        let outcome5 = authorization.poll(at: Self.start.addingTimeInterval(36))
        #expect(outcome5 == .authorizationPending)
        #expect(authorization.interval == 15)
    }

    @Test("approved: the result and its provider; approval happens once, and never after a denial")
    func approval() {
        var authorization = Self.pending()
        let outcome6 = authorization.approve(Self.result, provider: "oidc", at: Self.start.addingTimeInterval(30))
        #expect(outcome6)
        let outcome7 = authorization.approve(Self.result, provider: "other", at: Self.start.addingTimeInterval(31))
        #expect(!outcome7)
        let outcome8 = authorization.deny(at: Self.start.addingTimeInterval(32))
        #expect(!outcome8)
        let outcome9 = authorization.poll(at: Self.start.addingTimeInterval(40))
        #expect(outcome9 == .approved(Self.result, provider: "oidc"))

        var denied = Self.pending()
        let outcome10 = denied.deny(at: Self.start.addingTimeInterval(30))
        #expect(outcome10)
        let outcome11 = denied.approve(Self.result, provider: "oidc", at: Self.start.addingTimeInterval(31))
        #expect(!outcome11)
        let outcome12 = denied.poll(at: Self.start.addingTimeInterval(40))
        #expect(outcome12 == .accessDenied)
    }

    @Test("expired: expired_token whatever the state, and no approval or denial after the end")
    func expiry() {
        var authorization = Self.pending()
        let end = Self.start.addingTimeInterval(600)
        let outcome13 = authorization.approve(Self.result, provider: "oidc", at: end)
        #expect(!outcome13)
        let outcome14 = authorization.deny(at: end)
        #expect(!outcome14)
        let outcome15 = authorization.poll(at: end)
        #expect(outcome15 == .expiredToken)

        var approved = Self.pending()
        let outcome16 = approved.approve(Self.result, provider: "oidc", at: Self.start.addingTimeInterval(10))
        #expect(outcome16)
        let outcome17 = approved.poll(at: end.addingTimeInterval(1))
        #expect(outcome17 == .expiredToken)
    }

    @Test("the sealed form round-trips (what the store keeps)")
    func codable() throws {
        var authorization = Self.pending()
        _ = authorization.approve(Self.result, provider: "oidc", at: Self.start.addingTimeInterval(10))
        let data = try JSONEncoder().encode(authorization)
        #expect(try JSONDecoder().decode(DeviceAuthorization.self, from: data) == authorization)
    }
}
