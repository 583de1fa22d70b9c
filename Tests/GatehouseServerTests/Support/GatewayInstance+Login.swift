import Foundation
import GatehouseCore
import NIOHTTP1
import Testing

/// The native-app flow, hop by hop: gateway login → provider sign-in form → gateway callback → handoff.
extension GatewayInstance {
    struct NativeLogin {
        var verifier: String
        var clientState: String
        /// The gateway's redirect to the provider.
        var authorizeURL: String
        /// The provider's redirect back to the gateway's callback.
        var callbackURL: String
    }

    /// Starts a native login and signs in at the stand-in; stops before the gateway's callback.
    func beginNativeLogin(
        provider: String = "demo", user: String = "alice", redirectURI: String = clientRedirectURI, signInFields: [(String, String)]? = nil
    ) async throws -> NativeLogin {
        let verifier = PKCE.makeVerifier()
        let clientState = RandomToken.make(byteCount: 8)
        let login = try await http.send(
            .GET,
            url("/v1/auth/\(provider)/login?")
                + FormEncoding.encode([
                    ("redirect_uri", redirectURI), ("state", clientState), ("code_challenge", PKCE.challenge(for: verifier)),
                    ("code_challenge_method", "S256"),
                ]))
        try #require(login.status == 302, "login: \(login.status) \(login.text)")
        let authorizeURL = try #require(login.location)
        let callbackURL = try await signIn(at: authorizeURL, fields: signInFields ?? [("username", user), ("password", "\(user)-password")])
        return NativeLogin(verifier: verifier, clientState: clientState, authorizeURL: authorizeURL, callbackURL: callbackURL)
    }

    /// Posts the stand-in's login form; returns where the provider sends the browser back to.
    func signIn(
        at authorizeURL: String, fields signInFields: [(String, String)] = [("username", "alice"), ("password", "alice-password")]
    ) async throws -> String {
        let query = HTTPResult(status: 302, headers: ["location": authorizeURL], body: Data()).locationQuery
        let base = String(authorizeURL.split(separator: "?")[0])
        let fields = query.map { ($0.key, $0.value) } + signInFields
        let signedIn = try await http.form(base, fields)
        try #require(signedIn.status == 302, "sign-in: \(signedIn.status) \(signedIn.text)")
        return try #require(signedIn.location)
    }

    /// The whole native flow; returns the 201 body and the session token.
    func nativeLogin(
        provider: String = "demo", user: String = "alice", signInFields: [(String, String)]? = nil
    ) async throws -> (token: String, body: HTTPResult) {
        let login = try await beginNativeLogin(provider: provider, user: user, signInFields: signInFields)
        let callback = try await http.send(.GET, login.callbackURL)
        try #require(callback.status == 302, "callback: \(callback.status) \(callback.text)")
        #expect(callback.locationQuery["state"] == login.clientState)
        let code = try #require(callback.locationQuery["code"])
        let created = try await exchange(code: code, verifier: login.verifier)
        try #require(created.status == 201, "exchange: \(created.status) \(created.text)")
        return (try #require(created.json?["session_token"]?.stringValue), created)
    }

    func exchange(code: String, verifier: String, redirectURI: String = clientRedirectURI) async throws -> HTTPResult {
        try await http.json(
            .POST, url("/v1/session"),
            ["grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": redirectURI])
    }
}
