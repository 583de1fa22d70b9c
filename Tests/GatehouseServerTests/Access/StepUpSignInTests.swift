import Foundation
import GatehouseCore
import HTTPTypes
import Testing

@testable import GatehouseServer

@Suite("Step-up: where a person signs in again, and what a login asks of the provider")
struct StepUpSignInTests {
    static func session(bound: Bool = false) -> ActiveSession {
        let now = Date()
        let record = SessionRecord(
            id: "s1", tokenHash: "h", provider: "idp", subject: "alice", identity: Data(), sealedCredential: Data(), createdAt: now,
            lastSeenAt: now, expiresAt: now.addingTimeInterval(60), dpopThumbprint: bound ? "thumb" : nil)
        return ActiveSession(record: record, identity: Identity(subject: "alice"), credential: Credential(accessToken: "a", issuedAt: now))
    }

    static let required = GatehouseError.stepUpRequired(rule: "payments", StepUpRequirement(acr: ["urn:x:mfa", "urn:x:hw"], maxAgeSeconds: 300))

    @Test func theLoginURLNamesTheProviderTheTargetAndTheRequirement() {
        let url = StepUpSignIn.url(
            publicURL: "https://gate.example", provider: "idp", returningTo: "/v1/api/pay?x=1&y=2", requirement: Self.required.stepUp!)
        #expect(
            url
                == "https://gate.example/v1/auth/idp/login?return_to=%2Fv1%2Fapi%2Fpay%3Fx%3D1%26y%3D2&acr_values=urn%3Ax%3Amfa%20urn%3Ax%3Ahw&max_age=300"
        )
        let ageOnly = StepUpSignIn.url(publicURL: "https://g", provider: "p", returningTo: "/", requirement: StepUpRequirement(maxAgeSeconds: 5))
        #expect(ageOnly == "https://g/v1/auth/p/login?return_to=%2F&max_age=5")
    }

    @Test func onlyANavigationOfAnUnboundSessionIsRedirected() throws {
        func answer(
            _ error: any Error, session: ActiveSession? = Self.session(), method: String = "GET", mode: String? = "navigate"
        ) -> GatehouseError? {
            StepUpSignIn.redirecting(error, session: session, method: method, fetchMode: mode, publicURL: "https://g", target: "/v1/api/pay")
                as? GatehouseError
        }
        let redirected = try #require(answer(Self.required))
        #expect(redirected.status == 303)
        #expect(redirected.code == .stepUpRequired)
        #expect(redirected.location?.hasPrefix("https://g/v1/auth/idp/login?return_to=%2Fv1%2Fapi%2Fpay&") == true)
        #expect(answer(Self.required, mode: "NAVIGATE")?.status == 303)
        // A script's call, a POST, a key-bound session, no session, another refusal: unchanged.
        #expect(answer(Self.required, mode: "cors")?.status == 401)
        #expect(answer(Self.required, mode: nil)?.status == 401)
        #expect(answer(Self.required, method: "POST")?.status == 401)
        #expect(answer(Self.required, session: Self.session(bound: true))?.status == 401)
        #expect(answer(Self.required, session: nil)?.status == 401)
        #expect(answer(GatehouseError.invalidSession())?.location == nil)
        // The redirect carries no challenge; the 401 keeps it.
        #expect(Problem.headers(redirected)[.wwwAuthenticate] == nil)
        #expect(Problem.headers(redirected)[.location] == redirected.location)
        #expect(Problem.headers(Self.required)[.wwwAuthenticate]?.contains("insufficient_user_authentication") == true)
    }

    @Test func aLoginReadsAcrValuesAndMaxAgeAsPlainTokens() throws {
        #expect(try LoginFlow.stepUp([:]) == (nil, nil))
        let asked = try LoginFlow.stepUp(["acr_values": "urn:x:mfa urn:x:hw", "max_age": "0"])
        #expect(asked.acr == ["urn:x:mfa", "urn:x:hw"])
        #expect(asked.maxAge == 0)
        for bad in [["acr_values": ""], ["acr_values": "a\"b"], ["acr_values": "a\\b"], ["acr_values": "é"], ["max_age": "-1"], ["max_age": "soon"]] {
            #expect(throws: GatehouseError.self) { try LoginFlow.stepUp(bad) }
        }
    }
}
