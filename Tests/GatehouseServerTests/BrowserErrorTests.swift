import Foundation
import GatehouseCore
import GatehouseDemo
import HTTPTypes
import NIOHTTP1
import Testing

@testable import GatehouseServer

/// Browser errors: an error answered to a top-level navigation on a browser route is the HTML error page
/// with the problem's status, `code` and `request_id`; the same request asking for JSON, and every API route,
/// get problem+json.
@Suite("Browser errors")
struct BrowserErrorTests {
    /// What a browser sends on a top-level navigation.
    static let navigation = [
        ("Sec-Fetch-Mode", "navigate"), ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    ]
    /// The same navigation, from a script that wants JSON.
    static let json = [("Sec-Fetch-Mode", "navigate"), ("Accept", "application/json")]

    /// A closed loopback port: connecting there is refused at once.
    static let closed = "http://127.0.0.1:9"

    static let files: [(id: String, yaml: String)] = [
        ("down", "id: down\nkind: oidc\nissuer: \"\(closed)\"\nclient_id: gatehouse\nclient_secret: \"${DOWN_SECRET}\"\n"),
        (
            "gone",
            """
            id: gone
            kind: capture
            login_url: "\(closed)/login"
            allowed_origins: ["\(closed)"]
            success_url: "\(closed)/welcome*"
            capture: {from: cookie}
            probe: {url: "\(closed)/api/me"}
            """
        ),
    ]

    func withGateway(_ body: (GatewayInstance) async throws -> Void) async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, providerFiles: Self.files, providerEnvironment: ["DOWN_SECRET": "s3cret"]) { gw in
                try await body(gw)
            }
        }
    }

    /// Checks that `result` is the error page of `code` at `status`, carrying the request's id.
    func expectPage(_ result: HTTPResult, status: Int, code: String, _ comment: Comment) {
        #expect(result.status == status, comment)
        #expect(result.headers.first(name: "content-type")?.hasPrefix("text/html") == true, comment)
        #expect(result.text.contains(#"<meta name="gatehouse-error" content="\#(code)">"#), comment)
        let requestID = result.headers.first(name: "x-request-id") ?? ""
        #expect(!requestID.isEmpty, comment)
        #expect(result.text.contains(#"<meta name="gatehouse-request-id" content="\#(requestID)">"#), comment)
        #expect(result.text.contains(#"<code class="request-id">\#(requestID)</code>"#), comment)
    }

    /// Checks that `result` is problem+json of `code` at `status`, carrying the request's id.
    func expectProblem(_ result: HTTPResult, status: Int, code: String, _ comment: Comment) {
        #expect(result.status == status, comment)
        #expect(result.headers.first(name: "content-type") == "application/problem+json", comment)
        #expect(result.problemCode == code, comment)
        #expect(result.json?["request_id"]?.stringValue == result.headers.first(name: "x-request-id"), comment)
    }

    @Test("a navigation to each browser route's failure gets the page; the same request asking for JSON gets problem+json")
    func browserRoutes() async throws {
        try await withGateway { gw in
            let failures: [(HTTPMethod, String, Int, String)] = [
                (.POST, "/", 404, "not_found"),
                (.POST, "/v1/sign-in", 404, "not_found"),
                (.GET, "/v1/sign-out?return_to=https://elsewhere.example/", 400, "invalid_request"),
                (.GET, "/v1/auth/down/login?return_to=/", 503, "provider_unavailable"),
                (.GET, "/v1/auth/nobody/login?return_to=/", 404, "unknown_provider"),
                (.GET, "/v1/auth/demo/callback?state=forged&code=x", 400, "invalid_request"),
                (.GET, "/v1/pages/nosuchlogin/0/login", 404, "unknown_login"),
            ]
            for (method, path, status, code) in failures {
                expectPage(try await gw.http.send(method, gw.url(path), headers: Self.navigation), status: status, code: code, "\(method) \(path)")
                expectProblem(
                    try await gw.http.send(method, gw.url(path), headers: Self.json), status: status, code: code, "\(method) \(path) (JSON)")
                // A request that is no navigation (a script's fetch) keeps problem+json too.
                expectProblem(try await gw.http.send(method, gw.url(path)), status: status, code: code, "\(method) \(path) (no Accept)")
            }
        }
    }

    @Test("a page login whose site is down ends on the page with upstream_unavailable")
    func pageLoginSiteDown() async throws {
        try await withGateway { gw in
            let start = try await gw.http.send(.GET, gw.url("/v1/auth/gone/pages?return_to=/"), headers: Self.navigation)
            #expect(start.status == 303)
            let page = try #require(start.location)
            let shown = try await gw.http.send(.GET, gw.url(page), headers: Self.navigation + start.bindingHeaders)
            expectPage(shown, status: 503, code: "upstream_unavailable", "proxied login page")
            #expect(shown.headers.first(name: "retry-after") == "5")
        }
    }

    @Test("a native client's login start keeps problem+json, navigation or not")
    func nativeStart() async throws {
        try await withGateway { gw in
            let path = "/v1/auth/down/login?redirect_uri=http://127.0.0.1/callback&code_challenge=x&code_challenge_method=S256"
            expectProblem(try await gw.http.send(.GET, gw.url(path), headers: Self.navigation), status: 503, code: "provider_unavailable", "native")
        }
    }

    @Test("/v1/api/** and the other API routes never answer HTML")
    func apiRoutes() async throws {
        try await withGateway { gw in
            for path in ["/v1/api/anything", "/v1/api/", "/v1/session", "/v1/authz", "/v1/providers/nope", "/v1/nothing-here"] {
                let result = try await gw.http.send(.GET, gw.url(path), headers: Self.navigation)
                #expect(result.status >= 400, "\(path)")
                #expect(result.headers.first(name: "content-type")?.hasPrefix("text/html") != true, "\(path)")
            }
        }
    }

    @Test("what counts as a navigation")
    func navigationRule() {
        func fields(_ pairs: [(String, String)]) -> HTTPFields {
            HTTPFields(pairs.map { HTTPField(name: HTTPField.Name($0.0)!, value: $0.1) })
        }
        #expect(BrowserNavigation.isNavigation(fields(Self.navigation)))
        #expect(BrowserNavigation.isNavigation(fields([("Sec-Fetch-Mode", "navigate")])))
        #expect(BrowserNavigation.isNavigation(fields([("Accept", "text/html")])))
        #expect(!BrowserNavigation.isNavigation(fields(Self.json)))
        #expect(!BrowserNavigation.isNavigation(fields([("Accept", "text/html, application/problem+json")])))
        #expect(!BrowserNavigation.isNavigation(fields([("Accept", "application/json;q=0.5, text/html")])))
        #expect(!BrowserNavigation.isNavigation(fields([("Accept", "text/plain, text/html;q=0.5")])))
        #expect(!BrowserNavigation.isNavigation(fields([("Accept", "*/*")])))
        #expect(!BrowserNavigation.isNavigation(fields([("Sec-Fetch-Mode", "cors")])))
        #expect(BrowserNavigation.isBrowserRoute(path: "/v1/auth/p/login", hasRedirectURI: false))
        #expect(!BrowserNavigation.isBrowserRoute(path: "/v1/auth/p/login", hasRedirectURI: true))
        #expect(BrowserNavigation.isBrowserRoute(path: "/v1/auth/p/callback", hasRedirectURI: false))
        #expect(!BrowserNavigation.isBrowserRoute(path: "/v1/auth/p/token", hasRedirectURI: false))
        #expect(!BrowserNavigation.isBrowserRoute(path: "/v1/api/x", hasRedirectURI: false))
        #expect(!BrowserNavigation.isBrowserRoute(path: "/v1/session", hasRedirectURI: false))
    }
}
