import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Binds a browser login to the browser that started it (login CSRF, RFC 9700 §4.7 and §2.1).
///
/// When a browser login starts, the gateway draws a secret, keeps its SHA-256 in the sealed login
/// transaction and hands the secret to the browser in a short-lived, `HttpOnly` cookie scoped to the
/// path where the login ends. Before a session cookie is issued, the cookie must be there and hash to
/// the transaction's value (compared in constant time). A callback or page-login URL opened in any other
/// browser (handed over by whoever completed the provider step) therefore ends without a session.
///
/// - Redirect logins: `Path=/v1/auth/{provider}/callback`, `SameSite=Lax` (the provider's redirect back
///   is a top-level GET, which carries `Lax` cookies).
/// - Page logins (`acs`, `capture`): `Path=/v1/pages/{login}`, `SameSite=None; Secure`. The proxied
///   provider pages run under `CSP: sandbox`, an opaque origin, so their form posts (the Notify capture,
///   the legacy site's login form) are cross-site and would not carry a `Lax` cookie. `SameSite=None`
///   needs `Secure`, which browsers accept on `https` and on loopback `http`.
///
/// The cookie's name carries a digest of the login's id, so that logins in two tabs do not overwrite
/// each other's binding.
struct LoginBinding: Sendable {
    /// Where the login ends, which decides the cookie's path and `SameSite`.
    enum Scope: Sendable {
        case callback(provider: String)
        case pages(login: String)
    }

    let settings: ServerSettings

    /// A fresh secret for the browser and the digest the transaction keeps.
    static func make() -> (secret: String, digest: String) {
        let secret = RandomToken.make()
        return (secret, RandomToken.hash(secret))
    }

    /// `Set-Cookie` for a login whose gateway `state` (or page-login id) is `loginID`.
    func setting(_ secret: String, loginID: String, scope: Scope) -> String {
        attributes("\(cookieName(loginID: loginID))=\(secret)", scope: scope, maxAge: Int(settings.loginTransactionLifetime))
    }

    /// `Set-Cookie` that removes the binding once the login has ended, either way.
    func clearing(loginID: String, scope: Scope) -> String {
        attributes("\(cookieName(loginID: loginID))=", scope: scope, maxAge: 0)
    }

    /// Whether `request` carries the binding whose digest the transaction kept (never without a digest).
    func isBound(_ request: Request, loginID: String, digest: String?) -> Bool {
        guard let digest, let cookie = request.cookies[cookieName(loginID: loginID)], !cookie.value.isEmpty else { return false }
        return ConstantTime.equal(Data(RandomToken.hash(cookie.value).utf8), Data(digest.utf8))
    }

    /// The answer when the binding is missing or wrong: a page for the person in front of the browser,
    /// with the request's id.
    func refusal(loginID: String, scope: Scope, requestID: String? = nil) -> Response {
        var headers = HTTPFields()
        headers[.setCookie] = clearing(loginID: loginID, scope: scope)
        return ErrorPage.response(Self.notBound, requestID: requestID, headers: headers)
    }

    static let notBound = GatehouseError(
        code: .loginNotBound, status: 403,
        detail: "This sign-in was not started in this browser, or it took too long. Nothing was signed in. Start the sign-in again from this browser."
    )

    // MARK: Cookie

    private func cookieName(loginID: String) -> String {
        // The `__Secure-` prefix keeps a plain-http page of the same host from planting a binding.
        let prefix = isSecure ? "__Secure-" : ""
        return prefix + "gatehouse_login_" + RandomToken.hash("login-binding:" + loginID).prefix(16)
    }

    private var isSecure: Bool { settings.cookie.secure }

    private func attributes(_ pair: String, scope: Scope, maxAge: Int) -> String {
        var parts = [pair, "HttpOnly", "Max-Age=\(maxAge)"]
        switch scope {
        case .callback(let provider):
            parts.append("Path=/v1/auth/\(provider)/callback")
            parts.append("SameSite=Lax")
            if isSecure { parts.append("Secure") }
        case .pages(let login):
            parts.append("Path=/v1/pages/\(login)")
            parts.append("SameSite=None")
            parts.append("Secure")
        }
        return parts.joined(separator: "; ")
    }
}
