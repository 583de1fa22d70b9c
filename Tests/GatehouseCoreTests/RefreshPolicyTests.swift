import Foundation
import GatehouseCore
import Testing

@Suite struct RefreshPolicyTests {
    static let issued = Date(timeIntervalSince1970: 1_700_000_000)

    static func credential(lifetime: TimeInterval?, refreshToken: String? = "refresh") -> Credential {
        Credential(
            accessToken: "access", refreshToken: refreshToken,
            expiresAt: lifetime.map { issued.addingTimeInterval($0) }, issuedAt: issued)
    }

    @Test("the default skew is 30 seconds")
    func defaultSkew() {
        #expect(RefreshPolicy().skew == 30)
    }

    @Test("the effective skew is the configured skew for long-lived credentials")
    func skewForLongLifetime() {
        #expect(RefreshPolicy(skew: 30).effectiveSkew(for: Self.credential(lifetime: 3600)) == 30)
    }

    @Test("the effective skew is half the lifetime when that is smaller: 10 s lifetime gives 5 s")
    func skewForShortLifetime() {
        #expect(RefreshPolicy(skew: 30).effectiveSkew(for: Self.credential(lifetime: 10)) == 5)
        #expect(RefreshPolicy(skew: 30).effectiveSkew(for: Self.credential(lifetime: 60)) == 30)
    }

    @Test("without an expiry the effective skew is the configured skew")
    func skewWithoutExpiry() {
        #expect(RefreshPolicy(skew: 12).effectiveSkew(for: Self.credential(lifetime: nil)) == 12)
    }

    @Test("a credential issued already expired has zero effective skew")
    func skewForNegativeLifetime() {
        #expect(RefreshPolicy(skew: 30).effectiveSkew(for: Self.credential(lifetime: -5)) == 0)
    }

    @Test("no refresh without a refresh token, even when expired")
    func noRefreshWithoutRefreshToken() {
        let credential = Self.credential(lifetime: 3600, refreshToken: nil)
        #expect(!RefreshPolicy().needsRefresh(credential, now: Self.issued.addingTimeInterval(7200)))
    }

    @Test("no refresh without an expiry")
    func noRefreshWithoutExpiry() {
        let credential = Self.credential(lifetime: nil)
        #expect(!RefreshPolicy().needsRefresh(credential, now: Self.issued.addingTimeInterval(1_000_000)))
    }

    @Test("refresh when the expiry is within the skew, at the boundary, or past")
    func refreshWithinSkew() {
        let credential = Self.credential(lifetime: 3600)
        let policy = RefreshPolicy(skew: 30)
        #expect(policy.needsRefresh(credential, now: Self.issued.addingTimeInterval(3600 - 20)))
        #expect(policy.needsRefresh(credential, now: Self.issued.addingTimeInterval(3600 - 30)))
        #expect(policy.needsRefresh(credential, now: Self.issued.addingTimeInterval(3600 + 1)))
    }

    @Test("no refresh while the expiry is further away than the skew")
    func noRefreshWhenFar() {
        let credential = Self.credential(lifetime: 3600)
        let policy = RefreshPolicy(skew: 30)
        #expect(!policy.needsRefresh(credential, now: Self.issued))
        #expect(!policy.needsRefresh(credential, now: Self.issued.addingTimeInterval(3600 - 31)))
    }

    @Test("a 10 s credential is not refreshed on every call: only in its last 5 s")
    func shortLivedCredential() {
        let credential = Self.credential(lifetime: 10)
        let policy = RefreshPolicy(skew: 30)
        #expect(!policy.needsRefresh(credential, now: Self.issued))
        #expect(!policy.needsRefresh(credential, now: Self.issued.addingTimeInterval(4)))
        #expect(policy.needsRefresh(credential, now: Self.issued.addingTimeInterval(6)))
    }
}
