import Foundation
import GatehouseCore
import HTTPTypes
import Testing

@testable import GatehouseServer

/// The verdict cache of provider-issued bearer tokens: lifetimes, refusals capped at 10 s, a provider reload
/// voiding every verdict, the bound.
@Suite struct ProviderTokenVerdictsTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func session(_ hash: String) -> ActiveSession {
        ProviderTokenAuthenticator.session(
            token: "t", hash: hash, provider: "idp", grant: BearerTokenGrant(identity: Identity(subject: "svc"), expiresAt: nil, scope: []),
            now: now, until: now.addingTimeInterval(60))
    }

    @Test("a positive verdict holds until its deadline; the session names no session id of a store and is via bearer")
    func positive() throws {
        let verdicts = ProviderTokenVerdicts()
        verdicts.keep(.success(session("h1")), tokenHash: "h1", until: now.addingTimeInterval(60), now: now, generation: 0)
        let kept = try #require(verdicts.verdict(tokenHash: "h1", now: now.addingTimeInterval(59), generation: 0))
        #expect(try kept.get().via == .bearer)
        #expect(try kept.get().id.hasPrefix("bearer-"))
        #expect(verdicts.verdict(tokenHash: "h1", now: now.addingTimeInterval(60), generation: 0) == nil)
    }

    @Test("a verdict's entry names when it stops holding (what bounds a connection's memo of the token)")
    func entryUntil() throws {
        let verdicts = ProviderTokenVerdicts()
        verdicts.keep(.success(session("h1")), tokenHash: "h1", until: now.addingTimeInterval(60), now: now, generation: 3)
        let entry = try #require(verdicts.entry(tokenHash: "h1", now: now, generation: 3))
        #expect(entry.until == now.addingTimeInterval(60))
        verdicts.keep(.failure(.invalidBearerToken("no")), tokenHash: "h2", until: now.addingTimeInterval(60), now: now, generation: 3)
        #expect(verdicts.entry(tokenHash: "h2", now: now, generation: 3)?.until == now.addingTimeInterval(ProviderTokenVerdicts.refusalLifetime))
        #expect(verdicts.entry(tokenHash: "h1", now: now, generation: 4) == nil, "a reload voids it")
    }

    @Test("a refusal is kept at most 10 s, whatever it is given")
    func refusal() {
        let verdicts = ProviderTokenVerdicts()
        verdicts.keep(.failure(.invalidBearerToken("no")), tokenHash: "h", until: now.addingTimeInterval(300), now: now, generation: 0)
        #expect(verdicts.verdict(tokenHash: "h", now: now.addingTimeInterval(9), generation: 0) != nil)
        #expect(verdicts.verdict(tokenHash: "h", now: now.addingTimeInterval(10), generation: 0) == nil)
    }

    @Test("a reload of the providers voids the verdicts made before it")
    func reload() {
        let verdicts = ProviderTokenVerdicts()
        verdicts.keep(.success(session("h")), tokenHash: "h", until: now.addingTimeInterval(60), now: now, generation: 3)
        #expect(verdicts.verdict(tokenHash: "h", now: now, generation: 4) == nil)
    }

    @Test("the cache stays within its capacity")
    func bounded() {
        let verdicts = ProviderTokenVerdicts(capacity: 100)
        for index in 0..<1_000 {
            verdicts.keep(.success(session("h\(index)")), tokenHash: "h\(index)", until: now.addingTimeInterval(60), now: now, generation: 0)
        }
        #expect(verdicts.count <= 100)
        #expect(verdicts.verdict(tokenHash: "h999", now: now, generation: 0) != nil)
    }

    @Test("a refused provider token challenges with Bearer error=invalid_token")
    func challenge() {
        let headers = Problem.headers(.invalidBearerToken("no"))
        #expect(headers[.wwwAuthenticate] == "Bearer error=\"invalid_token\"")
        #expect(Problem.headers(.invalidToken("bound"))[.wwwAuthenticate]?.hasPrefix("DPoP ") == true)
    }
}
