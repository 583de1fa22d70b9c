import ArgumentParser
import Crypto
import Foundation
import GatehouseCore
import NIOHTTP1

/// `gatehouse login`: signs in to a gateway the way a native app does (RFC 8252 loopback redirect with PKCE),
/// binds the session to a new DPoP key, and stores it for `whoami`, `api` and `logout`.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to a gateway in the browser and store the session.",
        discussion: """
            Listens on 127.0.0.1 (a free port) for the browser's return, prints the sign-in URL and opens it \
            ($BROWSER, else xdg-open or open). The gateway must allow http://127.0.0.1/callback in \
            allowed_redirect_uris. The session is stored in $XDG_CONFIG_HOME/gatehouse/credentials.json \
            (default ~/.config/gatehouse/credentials.json).

            With --device (for a terminal without a browser: SSH, a container), no listener is opened: the \
            command prints a URL and a code on stderr; open the URL in a browser anywhere, type the code, \
            confirm and sign in there. The command polls the gateway until then and stores the session the \
            same way.
            """)

    @Option(help: "The gateway's base URL (e.g. https://auth.example.com).") var gateway: String
    @OptionGroup var trust: TrustOptions
    @Option(help: "The provider to sign in with (default: the gateway's only provider that signs in by redirect).") var provider: String?
    @Option(help: "Seconds to wait for the browser to come back.") var timeout = 300
    @Flag(help: "Do not open a browser; only print the URL.") var noBrowser = false
    @Flag(help: "Device sign-in: print a URL and a code to use in a browser elsewhere, and wait for the sign-in there.") var device = false

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() async throws {
        try await ClientFailure.reporting { try await signIn() }
    }

    private func signIn() async throws {
        let gateway = try StoredCredential.normalizedGateway(self.gateway)
        let store = try CredentialStore.standard()
        let timeout = self.timeout
        let noBrowser = self.noBrowser
        let requested = self.provider
        if device {
            let key = DPoPKey()
            let (grant, nonce) = try await GatewayClient.with(gateway: gateway, caFile: trust.caFile) { client in
                try await DeviceLogin(client: client, provider: requested, key: key).run()
            }
            let credential = StoredCredential(
                gateway: gateway, provider: grant.session.provider ?? requested ?? "", sessionToken: grant.sessionToken, tokenType: grant.tokenType,
                expiresAt: grant.expiresIn.map { Date().addingTimeInterval(TimeInterval($0)) }, dpopPrivateKey: key.pemRepresentation,
                dpopNonce: nonce, caFile: trust.absoluteCAFile)
            try store.update { entries in entries[gateway] = credential }
            ClientOutput.line("Signed in as \(Self.describe(grant)) with \(credential.provider)")
            return
        }
        let (credential, grant) = try await GatewayClient.with(gateway: gateway, caFile: trust.caFile) {
            client -> (StoredCredential, SessionGrantResponse) in
            let listing = try await client.send(.GET, "/v1/providers")
            guard listing.status == 200 else { throw listing.failure }
            let provider = try GatewayProvider.choose(requested, from: listing.decode(GatewayProvider.List.self).providers, gateway: gateway)

            let server = try await LoopbackCallbackServer.bind()
            let redirectURI = server.redirectURI
            let verifier = RandomToken.make(byteCount: 48)  // 64 characters
            let challenge = PKCE.challenge(for: verifier)
            let state = RandomToken.make(byteCount: 24)
            let authorizationURL =
                "\(gateway)/v1/auth/\(ClientEncoding.encoded(provider.id))/login?"
                + ClientEncoding.query([
                    ("redirect_uri", redirectURI), ("state", state), ("code_challenge", challenge), ("code_challenge_method", "S256"),
                ])
            ClientOutput.line("Open this URL to sign in: \(authorizationURL)")
            if !noBrowser { BrowserLauncher.open(authorizationURL) }

            let key = DPoPKey()
            let outcome: Result<(SessionGrantResponse, String?), ClientFailure> = try await server.serve(
                timeout: .seconds(timeout),
                timeoutFailure: ClientFailure("no sign-in came back to \(redirectURI) within \(timeout) s")
            ) { callback in
                guard callback.state == state else {
                    return (
                        .failed("This answer does not belong to the sign-in in progress (state mismatch)."),
                        .failure(ClientFailure("the browser came back with a wrong state; the sign-in was refused"))
                    )
                }
                if let error = callback.error {
                    let reason = callback.errorDescription.map { "\(error): \($0)" } ?? error
                    return (.failed("The sign-in failed (\(reason))."), .failure(ClientFailure("sign-in failed: \(reason)")))
                }
                guard let code = callback.code, !code.isEmpty else {
                    return (.failed("The answer carries no code."), .failure(ClientFailure("the browser came back without a code")))
                }
                do {
                    let exchanged = try await Self.exchange(client, code: code, verifier: verifier, redirectURI: redirectURI, key: key)
                    let who = Self.describe(exchanged.0)
                    return (.signedIn("Signed in to Gatehouse as \(who) with \(provider.name)."), .success(exchanged))
                } catch {
                    let failure = error as? ClientFailure ?? ClientFailure("\(error)")
                    return (.failed("The gateway refused the sign-in (\(failure.message))."), .failure(failure))
                }
            }
            let (grant, nonce) = try outcome.get()
            let credential = StoredCredential(
                gateway: gateway, provider: grant.session.provider ?? provider.id, sessionToken: grant.sessionToken,
                tokenType: grant.tokenType, expiresAt: grant.expiresIn.map { Date().addingTimeInterval(TimeInterval($0)) },
                dpopPrivateKey: key.pemRepresentation, dpopNonce: nonce, caFile: trust.absoluteCAFile)
            return (credential, grant)
        }
        try store.update { entries in entries[gateway] = credential }
        ClientOutput.line("Signed in as \(Self.describe(grant)) with \(credential.provider)")
    }

    /// `POST /v1/session` with the handoff code, the PKCE verifier and a DPoP proof of `key`.
    private static func exchange(
        _ client: GatewayClient, code: String, verifier: String, redirectURI: String, key: DPoPKey
    ) async throws -> (SessionGrantResponse, String?) {
        let body = try JSONSerialization.data(
            withJSONObject: [
                "grant_type": "authorization_code", "code": code, "code_verifier": verifier, "redirect_uri": redirectURI,
            ], options: [.sortedKeys, .withoutEscapingSlashes])
        let response = try await client.send(
            .POST, "/v1/session", headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: Array(body),
            authorization: RequestAuthorization(dpopKey: key))
        guard response.status == 201 || response.status == 200 else { throw response.failure }
        return (try response.decode(SessionGrantResponse.self), response.dpopNonce)
    }

    /// `<subject> (<email>)`, or the subject alone.
    private static func describe(_ grant: SessionGrantResponse) -> String {
        if let email = grant.session.identity?.email, !email.isEmpty { return "\(grant.session.subject) (\(email))" }
        return grant.session.subject
    }
}
