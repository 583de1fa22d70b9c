import Foundation
import GatehouseCore
import Testing

@Suite struct APIAuthenticationTests {
    static let credential = Credential(accessToken: "tok/en+1", issuedAt: Date(timeIntervalSince1970: 1_700_000_000))

    @Test("bearer adds Authorization: Bearer <token>")
    func bearer() {
        var request = OutgoingRequest(url: "https://api.example/me", headers: [("Accept", "application/json")])
        APIAuthentication.bearer.attach(Self.credential, to: &request)
        #expect(request.url == "https://api.example/me")
        #expect(request.headers.map(\.name) == ["Accept", "Authorization"])
        #expect(request.headers.last?.value == "Bearer tok/en+1")
    }

    @Test("query appends the escaped token under the parameter, with ? or &")
    func query() {
        var plain = OutgoingRequest(url: "https://spid.example/api/2/me")
        APIAuthentication.query(parameter: "oauth_token").attach(Self.credential, to: &plain)
        #expect(plain.url == "https://spid.example/api/2/me?oauth_token=tok%2Fen%2B1")
        #expect(plain.headers.isEmpty)

        var withQuery = OutgoingRequest(url: "https://spid.example/api/2/me?fields=name")
        APIAuthentication.query(parameter: "oauth_token").attach(Self.credential, to: &withQuery)
        #expect(withQuery.url == "https://spid.example/api/2/me?fields=name&oauth_token=tok%2Fen%2B1")
    }

    @Test("none leaves the request unchanged")
    func none() {
        var request = OutgoingRequest(url: "https://api.example/public?x=1", headers: [("Accept", "*/*")])
        APIAuthentication.none.attach(Self.credential, to: &request)
        #expect(request.url == "https://api.example/public?x=1")
        #expect(request.headers.count == 1)
        #expect(request.headers.first?.value == "*/*")
    }
}
