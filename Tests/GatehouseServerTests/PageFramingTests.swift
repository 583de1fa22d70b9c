import Foundation
import HTTPTypes
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// Every HTML page the gateway renders refuses to be framed (`Content-Security-Policy: frame-ancestors 'none'`
/// and `X-Frame-Options: DENY`), over real loopback HTTP: the home page and `/v1/sign-in`, the sign-out page,
/// the HTML error pages (of a failed navigation, a refused login and an unbound page login), and the provider pages of the
/// login-page proxy. A page with a policy of its own keeps it and gains the directive, in one field.
@Suite("Page framing")
struct PageFramingTests {
    /// Checks that `result` is an HTML page that no site may frame, with exactly one policy.
    func expectUnframeable(_ result: HTTPResult, _ comment: Comment) {
        #expect(result.headers.first(name: "content-type")?.hasPrefix("text/html") == true, comment)
        let policies = result.headers["content-security-policy"]
        #expect(policies.count == 1, comment)
        #expect(policies.first?.contains("frame-ancestors 'none'") == true, comment)
        #expect(result.headers["x-frame-options"] == ["DENY"], comment)
    }

    @Test("every gateway-rendered HTML page: home, sign-in, sign-out, error pages, proxied provider pages")
    func everyPage() async throws {
        try await LoginPageTests().withPages { gw, _, _ in
            for path in ["/", "/v1/sign-in?return_to=%2Fapp", "/v1/sign-out"] {
                let page = try await gw.http.send(.GET, gw.url(path))
                #expect(page.status == 200, "\(path)")
                expectUnframeable(page, "\(path)")
            }
            // The sign-out page's own policy is kept.
            let signOut = try await gw.http.send(.GET, gw.url("/v1/sign-out"))
            #expect(signOut.headers.first(name: "content-security-policy")?.hasPrefix("default-src 'none'; style-src 'unsafe-inline'") == true)

            // A failed navigation to a browser route: the HTML error page.
            let done = try await gw.http.send(.GET, gw.url("/v1/sign-out/done?state=forged"), headers: BrowserErrorTests.navigation)
            #expect(done.status == 400)
            expectUnframeable(done, "error page of /v1/sign-out/done")
            #expect(done.headers.first(name: "content-security-policy")?.contains("default-src 'none'") == true)

            // A redirect login the provider refused: the login's own error page.
            let login = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?return_to=/"))
            let redirect = HTTPResult(status: 302, headers: ["location": try #require(login.location)], body: Data())
            let state = try #require(redirect.locationQuery["state"])
            let refused = try await gw.http.send(
                .GET, gw.url("/v1/auth/demo/callback?error=access_denied&state=\(state)"), headers: login.bindingHeaders)
            #expect(refused.text.contains(#"content="access_denied""#))
            expectUnframeable(refused, "error page of a refused login")

            // A page login: the provider's page (sandboxed, and unframeable), and the refusal of another browser.
            let start = try await gw.http.send(.GET, gw.url("/v1/auth/legacy/pages?return_to=%2F"))
            #expect(start.status == 303)
            let loginPath = try #require(start.location)
            let page = try await gw.http.send(.GET, gw.url(loginPath), headers: start.bindingHeaders)
            #expect(page.status == 200)
            expectUnframeable(page, "proxied provider page")
            #expect(page.headers.first(name: "content-security-policy")?.hasPrefix("sandbox allow-scripts") == true)
            let unbound = try await gw.http.send(.GET, gw.url(loginPath))
            #expect(unbound.status == 403)
            #expect(unbound.text.contains(#"content="login_not_bound""#))
            expectUnframeable(unbound, "login_not_bound error page")
        }
    }

    @Test("a policy gains frame-ancestors 'none' in place of any frame-ancestors of its own")
    func policyMerge() {
        #expect(PageFraming.policy(adding: nil) == "frame-ancestors 'none'")
        #expect(PageFraming.policy(adding: "default-src 'none'") == "default-src 'none'; frame-ancestors 'none'")
        let replaced = PageFraming.policy(adding: "default-src 'none'; Frame-Ancestors https://evil.example ;")
        #expect(replaced == "default-src 'none'; frame-ancestors 'none'")
        let fields = PageFraming.denying([PageFraming.contentSecurityPolicy: "sandbox"])
        #expect(fields[PageFraming.contentSecurityPolicy] == "sandbox; frame-ancestors 'none'")
        #expect(fields[PageFraming.xFrameOptions] == "DENY")
    }
}
