import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `POST /v1/auth/{provider}/backchannel-logout` (OpenID Connect Back-Channel Logout 1.0): the provider tells the
/// gateway, server to server, that a person's session at the provider ended, and the gateway ends the sessions that
/// came from it on every instance sharing the store.
///
/// - 404 unless the provider is `oidc` with `backchannel_logout: true`.
/// - The logout token is verified by the adapter (``BackChannelLogoutProvider/verifyLogoutToken(_:)``); its `jti`
///   is then recorded once in the shared store (a replay to any instance is refused), and once more when its
///   sessions have ended: the provider's retry of a logout the store failed half-way goes through.
/// - The sessions named by `sid`, or with only `sub` every session of that subject at that provider, end as any
///   logout does (``SessionManager/end(_:)``: the store's deletion reaches every instance's session cache). Nothing is
///   revoked at the provider: it asked.
/// - 200 with `Cache-Control: no-store`; any refused token is 400 `{"error":"invalid_request"}` in the
///   specification's own format (§2.8), never problem+json, and ends nothing.
///
/// No cookie, no CSRF rule: a server posts it, and only a token signed by the provider does anything.
struct BackChannelLogoutController: Sendable {
    let providers: ProviderSet
    let sessions: SessionManager
    let clock: TimeSource
    /// A logout token is a small JWT; a form much larger than one is not a logout.
    static let maxBodyBytes = 64 * 1024
    /// How long a `jti` is remembered after its `iat`: beyond that the token is refused as stale anyway.
    static let jtiLifetime: TimeInterval = 2 * 300 + 60

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.post("/v1/auth/:provider/backchannel-logout") { request, context in try await logout(request, context) }
    }

    private func logout(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        guard let provider = providers.provider(providerID) as? any BackChannelLogoutProvider, provider.acceptsBackChannelLogout else {
            throw GatehouseError.notFound("Provider '\(providerID)' does not accept back-channel logouts.")
        }
        let form: [String: String]
        do {
            form = try await RequestBodyReader.form(from: request, limit: Self.maxBodyBytes)
        } catch let error as GatehouseError {
            return refusal(error.detail, provider: providerID, context)
        }
        guard let token = form["logout_token"], !token.isEmpty else {
            return refusal("The request has no logout_token.", provider: providerID, context)
        }
        let logout: LogoutToken
        do {
            logout = try await provider.verifyLogoutToken(token)
        } catch let error as ProviderError {
            return refusal(Self.describe(error), provider: providerID, context)
        }
        guard let match = logout.match else {
            return refusal("The logout token names neither sid nor sub.", provider: providerID, context)
        }
        // Two records per token: its `jti` when first seen, and "done" once its sessions have all ended. A replay of
        // a logout that went through finds both and is refused before it ends anything (else it would end the
        // sessions the person signed in for since). A token seen but not done is the provider's retry of a logout
        // the store failed half-way (after the first record): it goes on, and records "done" first, so a second
        // failure in a row is not retried again.
        let onceKey = "backchannel-logout \(providerID) \(logout.jti)"
        let until = logout.issuedAt.addingTimeInterval(Self.jtiLifetime)
        if try await !sessions.store.recordOnce(onceKey, until: until, now: clock.now()) {
            guard try await sessions.store.recordOnce(onceKey + " done", until: until, now: clock.now()) else {
                return refusal("The logout token was already used (jti replayed).", provider: providerID, context)
            }
        }
        let ids = try await sessions.store.sessionIDs(provider: providerID, matching: match)
        for id in ids {
            try await sessions.end(id)
        }
        _ = try await sessions.store.recordOnce(onceKey + " done", until: until, now: clock.now())
        context.logger.info(
            "back-channel logout",
            metadata: ["provider": "\(providerID)", "sessions_ended": "\(ids.count)", "by": "\(logout.sid == nil ? "sub" : "sid")"])
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// The specification's error answer; `description` is the gateway's own words, never the token.
    private func refusal(_ description: String, provider: String, _ context: GatehouseRequestContext) -> Response {
        context.logger.warning("back-channel logout refused", metadata: ["provider": "\(provider)", "reason": "\(description)"])
        let body = (try? JSONResponse.encode(["error": "invalid_request", "error_description": description])) ?? Data()
        return Response(
            status: .badRequest, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    private static func describe(_ error: ProviderError) -> String {
        switch error {
        case .rejected(let code, let description), .identityVoid(let code, let description): "\(code): \(description)"
        case .unavailable(let reason), .invalidResponse(let reason), .invalidGrant(let reason): reason
        }
    }
}
