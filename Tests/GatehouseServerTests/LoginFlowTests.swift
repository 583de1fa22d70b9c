import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import NIOHTTP1
import Testing

/// How a login ends when the provider says no: decided once (`ErrorMapping`, `LoginFlow`), by where the
/// error happened and who waits for the answer.
@Suite("Login flow endings")
struct LoginFlowTests {
    /// The gateway's `state` in its redirect to the provider.
    private static func gatewayState(_ login: HTTPResult) throws -> String {
        let query = HTTPResult(status: 302, headers: ["location": try #require(login.location)], body: Data()).locationQuery
        return try #require(query["state"])
    }

    @Test("a provider error at a browser's callback ends on an error page carrying its code; no session, the binding cleared")
    func browserProviderError() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                for (providerError, shown, status) in [("access_denied", "access_denied", 400), ("invalid_client", "server_error", 502)] {
                    let login = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?return_to=/"))
                    let state = try Self.gatewayState(login)
                    let callback = try await gw.http.send(
                        .GET, gw.url("/v1/auth/demo/callback?error=\(providerError)&error_description=no&state=\(state)"),
                        headers: login.bindingHeaders)
                    #expect(callback.status == status, "\(providerError)")
                    #expect(callback.headers.first(name: "content-type")?.hasPrefix("text/html") == true)
                    #expect(callback.text.contains(#"<meta name="gatehouse-error" content="\#(shown)">"#))
                    let cookies = callback.headers["set-cookie"]
                    #expect(!cookies.contains { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
                    #expect(cookies.contains { $0.contains("gatehouse_login_") && $0.contains("Max-Age=0") })
                }
            }
        }
    }

    @Test("the same errors reach a native client at its redirect URI with its state, never as a page")
    func nativeProviderError() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                for (providerError, heard) in [("access_denied", "access_denied"), ("invalid_client", "server_error")] {
                    let login = try await gw.beginNativeLogin()
                    let state = try Self.gatewayState(HTTPResult(status: 302, headers: ["location": login.authorizeURL], body: Data()))
                    let callback = try await gw.http.send(.GET, gw.url("/v1/auth/demo/callback?error=\(providerError)&state=\(state)"))
                    #expect(callback.status == 302)
                    #expect(callback.location?.hasPrefix(GatewayInstance.clientRedirectURI + "?") == true)
                    #expect(callback.locationQuery["error"] == heard)
                    #expect(callback.locationQuery["state"] == login.clientState)
                    #expect(callback.locationQuery["code"] == nil)
                }
            }
        }
    }

    @Test("a native client's state comes back byte for byte, however it was encoded; a state that could change the URL is refused")
    func stateRoundTrip() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let verifier = PKCE.makeVerifier()
                let common = FormEncoding.encode([
                    ("redirect_uri", GatewayInstance.clientRedirectURI), ("code_challenge", PKCE.challenge(for: verifier)),
                    ("code_challenge_method", "S256"),
                ])
                for state in ["a+b", "a%20b+c~", "x%2By/z?q:1@!$'()*,;", ""] {
                    let login = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?\(common)&state=\(state)"))
                    try #require(login.status == 302, "\(state): \(login.status) \(login.text)")
                    let callbackURL = try await gw.signIn(at: try #require(login.location))
                    let callback = try await gw.http.send(.GET, callbackURL)
                    let location = try #require(callback.location)
                    #expect(location.hasSuffix("&state=" + state), "\(state) came back in \(location)")
                    #expect(callback.locationQuery["code"] != nil)
                }
                for unsafe in ["a%zzb", "a%2", "a\"b", "a<b>"] {
                    let login = try await gw.http.send(.GET, gw.url("/v1/auth/demo/login?\(common)&state=\(unsafe)"))
                    #expect(login.status == 400, "\(unsafe): \(login.status)")
                    #expect(login.location == nil)
                }
            }
        }
    }

    @Test("every gateway problem code is distinct snake_case, as the API contract lists them")
    func problemCodes() {
        let raw = ProblemCode.gatewayCodes.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        #expect(raw.allSatisfy { $0.range(of: "^[a-z]+(_[a-z]+)*$", options: .regularExpression) != nil })
        #expect(raw.contains("invalid_session") && raw.contains("store_unavailable") && raw.contains("login_not_bound"))
    }
}
