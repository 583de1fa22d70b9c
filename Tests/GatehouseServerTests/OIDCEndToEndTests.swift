import Foundation
import GatehouseCore
import GatehouseDemo
import NIOHTTP1
import Testing

/// `kind: oidc` through the real gateway against the OIDC stand-in over loopback.
@Suite struct OIDCEndToEndTests {
    static func providerFile(_ idp: StandInOIDCProvider) -> (id: String, yaml: String) {
        (
            id: "oidc",
            yaml: "id: oidc\nkind: oidc\nissuer: \"\(idp.issuer)\"\nclient_id: \"\(idp.clientID)\"\nclient_secret: \"${OIDC_CLIENT_SECRET}\"\n"
        )
    }

    static func withGateway(_ body: (GatewayInstance, StandInOIDCProvider) async throws -> Void) async throws {
        let idp = StandInOIDCProvider()
        try await idp.start()
        do {
            try await StandIns.with { standIns in
                try await GatewayInstance.with(
                    standIns, providerFiles: [providerFile(idp)], providerEnvironment: ["OIDC_CLIENT_SECRET": "s3cret"]
                ) { gateway in
                    try await body(gateway, idp)
                }
            }
            await idp.stop()
        } catch {
            await idp.stop()
            throw error
        }
    }

    @Test("native login: the session's identity comes from the ID token; readyz is ready")
    func nativeLogin() async throws {
        try await Self.withGateway { gateway, idp in
            let (_, body) = try await gateway.nativeLogin(provider: "oidc")
            #expect(body.text.contains("user-alice"))
            let ready = try await gateway.http.send(.GET, gateway.url("/readyz"))
            #expect(ready.status == 200)
            #expect(idp.counters.discovery == 1)
        }
    }

    @Test("a rotated signing key verifies without restart; unknown kids do not refetch the JWKS every time")
    func keyRotation() async throws {
        try await Self.withGateway { gateway, idp in
            _ = try await gateway.nativeLogin(provider: "oidc")
            #expect(idp.counters.jwks == 1)
            idp.rotateSigningKey()
            _ = try await gateway.nativeLogin(provider: "oidc")
            #expect(idp.counters.jwks == 2)
            idp.setFault(.unknownKid)
            for _ in 0..<3 {
                let login = try await gateway.beginNativeLogin(provider: "oidc")
                let callback = try await gateway.http.send(.GET, login.callbackURL)
                #expect(callback.locationQuery["error"] == "server_error")
                #expect(callback.locationQuery["error_description"]?.contains("invalid_id_token_signature") == true)
            }
            #expect(idp.counters.jwks == 2)
        }
    }

    @Test("a bad ID token at the callback reaches the native client with its problem code")
    func refusedAtCallback() async throws {
        try await Self.withGateway { gateway, idp in
            idp.setFault(.wrongNonce)
            let login = try await gateway.beginNativeLogin(provider: "oidc")
            let callback = try await gateway.http.send(.GET, login.callbackURL)
            #expect(callback.locationQuery["error_description"]?.contains("nonce_mismatch") == true)
        }
    }

    @Test("while discovery fails, readyz names the provider and logins get 503 provider_unavailable")
    func discoveryDown() async throws {
        try await Self.withGateway { gateway, idp in
            idp.setDiscoveryAvailable(false)
            let ready = try await gateway.http.send(.GET, gateway.url("/readyz"))
            #expect(ready.status == 200)
            #expect(ready.json?["status"]?.stringValue == "degraded")
            #expect(ready.text.contains("oidc"))
            let login = try await gateway.http.send(
                .GET,
                gateway.url(
                    "/v1/auth/oidc/login?redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&code_challenge=\(PKCE.challenge(for: PKCE.makeVerifier()))&code_challenge_method=S256"
                ))
            #expect(login.status == 503)
            #expect(login.text.contains("provider_unavailable"))
        }
    }

    @Test("a refresh whose ID token names another subject ends the session with subject_changed")
    func subjectChangedOnRefresh() async throws {
        try await Self.withGateway { gateway, idp in
            let (token, _) = try await gateway.nativeLogin(provider: "oidc")
            idp.setFault(.changedSubjectOnRefresh)
            let refreshed = try await gateway.http.send(.POST, gateway.url("/v1/session/refresh"), headers: gateway.bearer(token))
            #expect(refreshed.status == 401)
            #expect(refreshed.problemCode == "subject_changed")
            let after = try await gateway.http.send(.GET, gateway.url("/v1/session"), headers: gateway.bearer(token))
            #expect(after.status == 401)
        }
    }
}
