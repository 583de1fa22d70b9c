import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Signing out from a page, for browsers (`DELETE /v1/session` is the API's way):
///
/// - `GET /v1/sign-out?return_to=…`: a page with one button, a form that posts to `POST /v1/sign-out`; it
///   changes nothing itself, so a link (an application behind forward auth links to it on its own host) or
///   a prefetch cannot sign anyone out.
/// - `POST /v1/sign-out`: ends the cookie's session as `DELETE /v1/session` does (``SessionLogout``), clears
///   the cookie, and sends the browser to the provider's browser logout, which comes back to
///   `/v1/sign-out/done` with a sealed ``SignOutState``; without a browser logout, straight to `return_to`.
/// - `GET /v1/sign-out/done?state=…`: the state's `return_to`, if the state is the gateway's and current.
///
/// `return_to` follows the login's rules (``ReturnToPolicy``); anything else is 400, never a redirect.
struct SignOutController: Sendable {
    let sessions: SessionManager
    /// Finds the cookie's session as every other route does (one cookie parser, one rule for bound sessions).
    let resolver: SessionResolver
    let providers: ProviderSet
    let policy: CurrentPolicy
    let metrics: GatewayMetrics
    let settings: ServerSettings

    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    private static let maxBodyBytes = 64 * 1024

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/v1/sign-out") { request, _ in try page(request) }
        router.post("/v1/sign-out") { request, context in try await signOut(request, context) }
        router.get("/v1/sign-out/done") { request, _ in try done(request) }
    }

    // MARK: The page

    private func page(_ request: Request) throws -> Response {
        let returnTo = try accepted(request.uri.queryParameters.get("return_to"))
        // The form posts to the path on the host the page was served from: behind forward auth, the application's.
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title>\
            <meta name="viewport" content="width=device-width, initial-scale=1">\
            <style>body{font-family:system-ui,sans-serif;max-width:40em;margin:2em auto}</style></head><body>\
            <h1>Sign out</h1><form method="post" action="/v1/sign-out">\
            <input type="hidden" name="return_to" value="\(HTMLEscaping.escape(returnTo))">\
            <button type="submit">Sign out</button></form></body></html>
            """
        // No script, and no framing (a sign-out button under someone else's page, ``PageFraming``); no `form-action`, which
        // browsers also apply to the redirect on to the provider.
        return Response(
            status: .ok,
            headers: PageFraming.denying([
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                PageFraming.contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'",
            ]),
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    // MARK: Signing out

    private func signOut(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        // The session is the cookie's, without X-CSRF (a plain form cannot send it): the request's origin
        // is the CSRF defence instead, checked before anything is read or changed.
        let origin = try requestOrigin(request.headers)
        let form = try await RequestBodyReader.form(from: request, limit: Self.maxBodyBytes)
        var returnTo = try accepted(form["return_to"])
        // From an application's page (forward auth), a path means one on the application's host; made
        // absolute so that it survives the detour through the provider and `/v1/sign-out/done` on the gateway.
        if let origin, origin != WebOrigin.of(settings.publicURL), ReturnToPolicy.isSafe(returnTo) {
            returnTo = origin + returnTo
        }
        guard let session = try await resolver.cookieSession(in: request.headers) else {
            return JSONResponse.redirect(to: returnTo, status: .seeOther)
        }
        _ = try await SessionLogout(sessions: sessions, providers: providers, metrics: metrics).end(session, logger: context.logger)
        var headers = HTTPFields()
        headers[.setCookie] = SessionCookie(settings: settings).clearing()
        let state = try SignOutState(returnTo: returnTo, expiresAt: sessions.clock.now().addingTimeInterval(Self.stateLifetime(settings)))
            .sealed(with: sessions.sealer)
        // One fixed URL for every sign-out, which the operator registers at the provider; `state` carries the rest.
        let providerLogout = (providers.provider(session.provider) as? any BrowserLogoutProvider)?
            .browserLogoutURL(for: session.credential, returnTo: settings.publicURL + "/v1/sign-out/done", state: state)
        return JSONResponse.redirect(to: providerLogout ?? returnTo, status: .seeOther, headers: headers)
    }

    /// A trip through the provider's logout page takes as long as a login's trip through its sign-in page.
    static func stateLifetime(_ settings: ServerSettings) -> TimeInterval { settings.loginTransactionLifetime }

    /// The origin the request came from when it sent one; throws 403 unless it is the gateway's own or one of
    /// `access.return_to_origins`, or, without `Origin`, the browser says the request is same-origin.
    private func requestOrigin(_ headers: HTTPFields) throws -> String? {
        if let sent = headers[.origin] {
            let allowed = ([settings.publicURL] + policy.current.access.returnToOrigins).compactMap(WebOrigin.of)
            guard let origin = WebOrigin.of(sent), allowed.contains(origin) else {
                throw GatehouseError.forbidden(
                    .csrfRequired, "POST /v1/sign-out is accepted only from the gateway's own origin or one of access.return_to_origins.")
            }
            return origin
        }
        guard let site = headers[Self.secFetchSite], ASCII.equalsIgnoringCase(site, "same-origin") else {
            throw GatehouseError.forbidden(
                .csrfRequired, "POST /v1/sign-out needs an Origin of the gateway or of access.return_to_origins (or Sec-Fetch-Site: same-origin).")
        }
        return nil
    }

    // MARK: Back from the provider

    private func done(_ request: Request) throws -> Response {
        guard let text = request.uri.queryParameters.get("state"),
            let state = SignOutState.open(text, with: sessions.sealer, now: sessions.clock.now())
        else {
            throw GatehouseError.invalidRequest("The sign-out state is missing, expired or not the gateway's.")
        }
        // The access rules may have changed (SIGHUP) since the sign-out began.
        return JSONResponse.redirect(to: try accepted(state.returnTo), status: .seeOther)
    }

    /// `return_to` (`/` when absent) when a login would accept it; otherwise 400.
    private func accepted(_ returnTo: String?) throws -> String {
        let returnTo = returnTo ?? "/"
        guard ReturnToPolicy.accepts(returnTo, access: policy.current.access) else {
            throw GatehouseError.invalidRequest("return_to must be a path on this gateway or a URL on an origin access.return_to_origins lists.")
        }
        return returnTo
    }
}
