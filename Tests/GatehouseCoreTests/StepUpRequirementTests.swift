import Foundation
import GatehouseCore
import Testing

@Suite("Step-up per rule (require:)")
struct StepUpRequirementTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let policy = AccessPolicy(
        rules: [
            AccessRule(
                name: "payments", paths: [try! PathPattern("/payments/**")], allow: .authenticated,
                require: StepUpRequirement(acr: ["urn:mfa"], maxAgeSeconds: 300)),
            AccessRule(
                name: "admins", paths: [try! PathPattern("/admin/**")], allow: .conditions([AccessCondition(subjects: ["root"])]),
                require: StepUpRequirement(acr: ["urn:mfa"])),
        ])

    static func decide(_ path: String, subject: String = "alice", acr: String?, age: TimeInterval) -> AccessDecision {
        policy.decide(
            method: "GET", path: path.split(separator: "/"), user: ("p", Identity(subject: subject)),
            authentication: AccessAuthentication(acr: acr, authenticatedAt: now.addingTimeInterval(-age)), now: now)
    }

    @Test("a session meeting acr and max_age passes; one short of either is asked to step up, naming the rule and the requirement")
    func requirement() {
        let required = StepUpRequirement(acr: ["urn:mfa"], maxAgeSeconds: 300)
        #expect(Self.decide("/payments/x", acr: "urn:mfa", age: 300) == .allow(rule: "payments"))
        #expect(Self.decide("/payments/x", acr: "urn:mfa", age: 301) == .stepUp(rule: "payments", requirement: required))
        #expect(Self.decide("/payments/x", acr: "urn:pwd", age: 10) == .stepUp(rule: "payments", requirement: required))
        #expect(Self.decide("/payments/x", acr: nil, age: 10) == .stepUp(rule: "payments", requirement: required))
        // Other paths ask nothing of the authentication.
        #expect(Self.decide("/other", acr: nil, age: 100_000) == .allow(rule: nil))
    }

    @Test("who may is decided first: a session the conditions refuse is denied, not asked to sign in again; no session is a 401")
    func order() {
        #expect(Self.decide("/admin/x", subject: "alice", acr: nil, age: 0) == .deny(rule: "admins"))
        #expect(
            Self.decide("/admin/x", subject: "root", acr: nil, age: 0) == .stepUp(rule: "admins", requirement: StepUpRequirement(acr: ["urn:mfa"])))
        #expect(Self.decide("/admin/x", subject: "root", acr: "urn:mfa", age: 0) == .allow(rule: "admins"))
        #expect(Self.policy.decide(method: "GET", path: ["payments"], user: nil, now: Self.now) == .needsSession)
    }
}
