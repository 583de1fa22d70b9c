import Foundation
import GatehouseConfiguration
import GatehouseCore
import GatehouseDemo
import GatehouseServer
import NIOHTTP1
import Testing

/// Login CSRF (RFC 9700 §4.7): a browser login ends only in the browser that started it. The attack in
/// a real browser is in `Tests/Browser/test_login_csrf.py`; these are its HTTP-level cases.
@Suite("Login binding")
struct LoginBindingTests {
    /// Starts a browser login and signs in at the stand-in; returns the binding cookie and the callback URL.
    func begin(_ gw: GatewayInstance, provider: String = "demo") async throws -> (binding: String, callbackURL: String, setCookie: String) {
        let login = try await gw.http.send(.GET, gw.url("/v1/auth/\(provider)/login?return_to=/"))
        try #require(login.status == 302)
        let setCookie = try #require(login.headers["set-cookie"].first { $0.contains("gatehouse_login_") })
        let binding = try #require(login.loginBinding)
        return (binding, try await gw.signIn(at: try #require(login.location)), setCookie)
    }

    @Test("the binding cookie: HttpOnly, scoped to the provider's callback, SameSite=Lax, lives as long as the transaction")
    func attributes() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns, configure: { $0.cookie.secure = true }) { gw in
                let (_, _, setCookie) = try await begin(gw)
                let attributes = Set(setCookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(setCookie.hasPrefix("__Secure-gatehouse_login_"))
                #expect(attributes == ["HttpOnly", "Max-Age=600", "Path=/v1/auth/demo/callback", "SameSite=Lax", "Secure"])
            }
        }
    }

    @Test("a callback opened without the binding, or with another login's, gives an error page and no session; the code is never redeemed")
    func refused() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let before = await standIns.oauth.stats.authorizationCodeRequests
                let attacker = try await begin(gw)
                let victimOwn = try await begin(gw)
                for cookie in [nil, victimOwn.binding, attacker.binding.replacingOccurrences(of: "=", with: "=x")] {
                    let attackerLogin = try await begin(gw)
                    let headers = cookie.map { [("Cookie", $0)] } ?? []
                    let callback = try await gw.http.send(.GET, attackerLogin.callbackURL, headers: headers)
                    #expect(callback.status == 403, "\(cookie ?? "no cookie"): \(callback.status)")
                    #expect(callback.headers.first(name: "content-type")?.hasPrefix("text/html") == true)
                    #expect(callback.text.contains("login_not_bound"))
                    #expect(!callback.headers["set-cookie"].contains { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
                    // The transaction is spent: the right browser cannot finish it afterwards either.
                    let late = try await gw.http.send(.GET, attackerLogin.callbackURL, headers: [("Cookie", attackerLogin.binding)])
                    #expect(late.status == 400)
                }
                #expect(await standIns.oauth.stats.authorizationCodeRequests == before)
                // The login whose binding is present still works.
                let own = try await gw.http.send(.GET, victimOwn.callbackURL, headers: [("Cookie", victimOwn.binding)])
                #expect(own.status == 303)
                #expect(own.headers["set-cookie"].contains { $0.hasPrefix(gw.gateway.settings.cookie.name + "=") })
                #expect(own.headers["set-cookie"].contains { $0.contains("gatehouse_login_") && $0.contains("Max-Age=0") })
            }
        }
    }

    @Test("native logins are bound by PKCE and the redirect URI, not by a cookie")
    func native() async throws {
        try await StandIns.with { standIns in
            try await GatewayInstance.with(standIns) { gw in
                let login = try await gw.beginNativeLogin()
                let callback = try await gw.http.send(.GET, login.callbackURL)
                #expect(callback.status == 302)
                #expect(callback.locationQuery["code"] != nil)
            }
        }
    }
}
