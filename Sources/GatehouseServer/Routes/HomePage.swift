import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `GET /[?return_to=…]`: the providers with sign-in links, and the signed-in session. It is also the sign-in
/// page a proxy sends browsers to (`/v1/authz`'s 401 names it in `X-Gatehouse-Sign-In`): every link carries
/// `return_to` when it is one a login accepts (a path here, or a URL on `access.return_to_origins`).
struct HomePage: Sendable {
    let providers: ProviderSet
    let resolver: SessionResolver
    let policy: CurrentPolicy

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/") { request, _ in try await page(request) }
        // The same page under /v1/, which a proxy in front of an application already routes to the gateway.
        router.get("/v1/sign-in") { request, _ in try await page(request) }
    }

    private func page(_ request: Request) async throws -> Response {
        // The page is for browsers: only the cookie counts, and no session is no error.
        let session =
            resolver.cookies.token(in: request.headers[values: .cookie]) == nil
            ? nil : try? await resolver.resolve(request.headers, method: .get, path: Substring(request.uri.path)).0
        var html = """
            <!doctype html><html><head><meta charset="utf-8"><title>Gatehouse</title>
            <style>body{font-family:system-ui,sans-serif;max-width:40em;margin:2em auto}li{margin:.4em 0}code{background:#eee;padding:0 .2em}</style>
            </head><body><h1>Gatehouse</h1>
            """
        if let session {
            html += "<p>Signed in as <b>\(escape(session.identity.name ?? session.identity.subject))</b>"
            if let email = session.identity.email { html += " (\(escape(email)))" }
            html += " with <code>\(escape(session.provider))</code>. Session expires \(RFC3339.string(session.record.expiresAt)).</p>"
            html += "<p>Your session as the API shows it: <a href=\"/v1/session\">/v1/session</a>.</p>"
            // A provider with a browser session of its own (SPiD) names where to end it: go there after.
            html += """
                <button onclick="fetch('/v1/session',{method:'DELETE',headers:{'X-CSRF':'1'}}).then(r=>r.json()).catch(()=>({}))\
                .then(b=>{if(b.browser_logout_url){location.href=b.browser_logout_url}else{location.reload()}})">Sign out</button>
                """
        } else {
            html += "<p>Not signed in.</p>"
        }
        let requested = request.uri.queryParameters.get("return_to")
        let returnTo = requested.flatMap { ReturnToPolicy.accepts($0, access: policy.current.access) ? $0 : nil } ?? "/"
        let query = "return_to=" + PercentEncoding.encode(returnTo.utf8, keeping: PercentEncoding.isUnreserved)
        html += "<h2>Providers</h2><ul>"
        for provider in providers.all {
            let id = escape(provider.descriptor.id)
            let name = escape(provider.descriptor.name)
            let kind = "<small>(\(escape(provider.descriptor.kind)))</small>"
            if provider is any LoginPageProvider {
                html += "<li><a href=\"/v1/auth/\(id)/pages?\(query)\">Sign in with \(name)</a> \(kind)</li>"
            } else if provider.loginStyle == .redirect {
                html += "<li><a href=\"/v1/auth/\(id)/login?\(query)\">Sign in with \(name)</a> \(kind)</li>"
            } else {
                html += "<li>\(name) \(kind): the client posts to <code>/v1/auth/\(id)/\(provider.loginStyle.rawValue)</code></li>"
            }
        }
        html += "</ul></body></html>"
        return Response(
            status: .ok, headers: PageFraming.denying([.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]),
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
