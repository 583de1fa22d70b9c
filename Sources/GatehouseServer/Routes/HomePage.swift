import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `GET /`: the providers with sign-in buttons, and the signed-in session, for people trying the gateway.
struct HomePage: Sendable {
    let providers: ProviderSet
    let resolver: SessionResolver

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/") { request, _ in try await page(request) }
    }

    private func page(_ request: Request) async throws -> Response {
        // The page is for browsers: only the cookie counts, and no session is no error.
        let session = request.cookies[resolver.cookieName] == nil ? nil : try? await resolver.resolve(request.headers, method: .get).0
        var html = """
            <!doctype html><html><head><meta charset="utf-8"><title>Gatehouse</title>
            <style>body{font-family:system-ui,sans-serif;max-width:40em;margin:2em auto}li{margin:.4em 0}code{background:#eee;padding:0 .2em}</style>
            </head><body><h1>Gatehouse</h1>
            """
        if let session {
            html += "<p>Signed in as <b>\(escape(session.identity.name ?? session.identity.subject))</b>"
            if let email = session.identity.email { html += " (\(escape(email)))" }
            html += " with <code>\(escape(session.provider))</code>. Session expires \(RFC3339.string(session.record.expiresAt)).</p>"
            html += "<p>Try <a href=\"/v1/session\">/v1/session</a> or <a href=\"/v1/api/\">/v1/api/</a>.</p>"
            html += """
                <button onclick="fetch('/v1/session',{method:'DELETE',headers:{'X-CSRF':'1'}}).then(()=>location.reload())">Sign out</button>
                """
        } else {
            html += "<p>Not signed in.</p>"
        }
        html += "<h2>Providers</h2><ul>"
        for provider in providers.all {
            let id = provider.descriptor.id
            let name = escape(provider.descriptor.name)
            switch provider.loginStyle {
            case .redirect:
                html += "<li><a href=\"/v1/auth/\(escape(id))/login?return_to=/\">Sign in with \(name)</a> <small>(\(escape(provider.descriptor.kind)))</small></li>"
            case .assertion, .token:
                html += "<li>\(name) <small>(\(escape(provider.descriptor.kind)), POST /v1/auth/\(escape(id))/\(provider.loginStyle.rawValue))</small></li>"
            }
        }
        html += "</ul></body></html>"
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}
