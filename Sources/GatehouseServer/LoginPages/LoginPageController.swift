import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// The login-page proxy of the `acs` and `capture` kinds.
///
/// - `GET /v1/auth/{provider}/pages?redirect_uri…|return_to…` starts a page login bound to a new login
///   transaction and redirects to the provider's first page, served under `/v1/pages/{login}/{origin}/…`.
/// - `GET|POST /v1/pages/{login}/{origin index}/{path…}` fetches from that allowed origin only, with the
///   login's cookie jar (sealed in the store with the login, never handed to the browser), rewrites `Location`, links and forms,
///   injects the provider's page script (kinds that adopt `PageScriptCapturing`, such as `acs`), and looks for
///   the token itself where the kind says where it is (`capture`).
/// - `POST /v1/pages/{login}/capture` receives what a page script captured.
/// Either capture ends the login like a redirect login: handoff code or cookie session.
struct LoginPageController: Sendable {
    let providers: ProviderSet
    let flow: LoginFlow
    /// The transport of a provider's pages, given its `tls.ca_file`.
    let transport: @Sendable (_ caFile: String?) -> any HTTPTransport
    let clock: TimeSource
    let loginLifetime: TimeInterval
    let jars: LoginPageJars
    /// Bodies of login forms and of provider pages.
    static let maxBodyBytes = 1 << 20

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.get("/v1/auth/:provider/pages") { request, context in try await start(request, context) }
        router.post("/v1/pages/:login/capture") { request, context in try await capture(request, context) }
        for method in [HTTPRequest.Method.get, .post] {
            router.on("/v1/pages/:login/:origin/**", method: method) { request, context in try await proxy(request, context) }
            router.on("/v1/pages/:login/:origin", method: method) { request, context in try await proxy(request, context) }
        }
    }

    private func pageProvider(_ id: String) throws -> any LoginPageProvider {
        guard let provider = try providers.require(id) as? any LoginPageProvider else {
            throw GatehouseError.unsupported("Provider '\(id)' has no gateway-served login pages.")
        }
        return provider
    }

    private static func unknownLogin() -> GatehouseError {
        GatehouseError(code: .unknownLogin, status: 404, detail: "No page login in progress under this address (unknown, finished or expired).")
    }

    // MARK: Start

    private func start(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        let provider = try pageProvider(providerID)
        let started = try flow.start(
            query: request.uri.queryDictionary, rawQuery: request.uri.query, providerID: providerID, provider: provider, channel: .pages)
        return try await begin(started, providerID: providerID, provider: provider, context)
    }

    /// Keeps a started page login and sends the browser to the provider's first page (also the device page's
    /// way into a page login, with a transaction marked for the device).
    func begin(
        _ started: LoginFlow.Started, providerID: String, provider: any LoginPageProvider, _ context: GatehouseRequestContext
    ) async throws -> Response {
        let startURL: String
        do {
            startURL = try await provider.loginStartURL()
        } catch {
            // The person sees "could not be found"; the operator's clue is the cause, on the request's log line.
            context.logger.warning(
                "page login failed: login page not found", metadata: ["provider": "\(providerID)", "cause": "\(error)"])
            throw GatehouseError.upstreamUnavailable("The provider's login page could not be found.")
        }
        let id = started.transaction.state
        let entry = LoginPageJars.Entry(
            transaction: started.transaction, client: context.remoteAddress ?? "unknown",
            expiresAt: started.transaction.createdAt.addingTimeInterval(loginLifetime))
        do {
            try await jars.insert(entry, id: id, now: clock.now())
        } catch LoginPageJars.Refusal.clientBusy {
            throw GatehouseError(
                code: .tooManyLogins, status: 429, detail: "This client has \(jars.perClient) page logins in progress; finish or abandon one.",
                retryAfter: 60)
        } catch LoginPageJars.Refusal.full {
            throw GatehouseError(code: .tooManyLogins, status: 503, detail: "Too many page logins in progress.", retryAfter: 5)
        }
        guard let location = rewriter(id: id, provider: provider).location(startURL, base: startURL) else {
            throw GatehouseError.invalidRequest("The login page is not on an allowed origin.")
        }
        var headers = started.headers
        headers[.cacheControl] = "no-store"
        return JSONResponse.redirect(to: location, status: .seeOther, headers: headers)
    }

    /// Runs `body` with the page login `id` if it is in progress and, for a browser login, this is the
    /// browser that started it (``LoginBinding``); otherwise answers with the refusal. Every proxied page and
    /// every capture goes through here, so a page-login URL opened elsewhere neither shows the provider's
    /// pages (with the starter's cookie jar) nor ends in a session.
    private func withBoundEntry(
        _ id: String, _ request: Request, _ context: GatehouseRequestContext, _ body: (LoginPageJars.Entry) async throws -> Response
    ) async throws -> Response {
        guard let entry = try await jars.entry(id, now: clock.now()) else { throw Self.unknownLogin() }
        if let refusal = flow.refusal(request, for: entry.transaction, .pages, logger: context.logger) { return refusal }
        return try await body(entry)
    }

    private func rewriter(id: String, provider: any LoginPageProvider) -> LoginPageRewriter {
        LoginPageRewriter(prefix: "/v1/pages/\(id)", origins: provider.allowedOrigins)
    }

    // MARK: Proxy

    private func proxy(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let id = try context.parameters.require("login")
        return try await withBoundEntry(id, request, context) { entry in try await proxy(request, context, id: id, entry: entry) }
    }

    private func proxy(_ request: Request, _ context: GatehouseRequestContext, id: String, entry: LoginPageJars.Entry) async throws -> Response {
        let providerID = entry.transaction.provider
        let provider = try pageProvider(providerID)
        guard let index = Int(try context.parameters.require("origin")), provider.allowedOrigins.indices.contains(index) else {
            throw GatehouseError(code: .originNotAllowed, status: 403, detail: "The login-page proxy only fetches the provider's configured origins.")
        }
        let origin = provider.allowedOrigins[index]
        // `/v1/pages/{login}/{origin}`: four segments.
        let target = try UpstreamPath.join(
            base: origin, rawPath: Substring(request.uri.path), droppingSegments: 4, query: request.uri.query.map { Substring($0) })
        guard WebOrigin.of(target) == origin else { throw GatehouseError.invalidRequest("The path leaves the provider's origin.") }

        var headers: [(name: String, value: String)] = [
            ("Accept", request.headers[.accept] ?? "text/html,*/*"), ("User-Agent", request.headers[.userAgent] ?? "Gatehouse"),
        ]
        if let language = request.headers[.acceptLanguage] { headers.append(("Accept-Language", language)) }
        var body: Data?
        if request.method == .post {
            var request = request
            let buffer: ByteBuffer
            do {
                buffer = try await request.collectBody(upTo: Self.maxBodyBytes)
            } catch {
                throw GatehouseError.payloadTooLarge("The form exceeds \(Self.maxBodyBytes) bytes.")
            }
            body = Data(buffer.readableBytesView)
            headers.append(("Content-Type", request.headers[.contentType] ?? "application/x-www-form-urlencoded"))
            // Sites that check the origin of a form see their own.
            headers.append(("Origin", origin))
        }
        let jar = entry.cookies[origin] ?? [:]
        if !jar.isEmpty { headers.append(("Cookie", jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))) }

        let response: TransportResponse
        do {
            response = try await transport(providers.provider(providerID)?.descriptor.caFile).send(
                TransportRequest(method: request.method.rawValue, url: target, headers: headers, body: body))
        } catch {
            context.logger.warning(
                "page login failed: login page unreachable",
                metadata: [
                    "provider": "\(providerID)", "url": "\(AsyncHTTPTransport.redacted(target))",
                    "cause": "\((error as? TransportError).map { $0.cause ?? $0.description } ?? "\(error)")",
                ])
            throw GatehouseError.upstreamUnavailable("The provider's login page could not be reached.")
        }
        guard response.body.count <= Self.maxBodyBytes else {
            throw GatehouseError(code: .upstreamTooLarge, status: 502, detail: "The provider's page is too large.")
        }
        let setCookies = response.headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value)
        let updatedJar: [String: String]
        if setCookies.isEmpty {
            updatedJar = jar
        } else {
            updatedJar = try await jars.store(setCookies: setCookies, origin: origin, id: id, now: clock.now())
        }

        let contentType = response.header("Content-Type") ?? ""
        let isHTML = contentType.lowercased().contains("text/html")
        let text = isHTML ? String(decoding: response.body, as: UTF8.self) : nil
        let known = setCookies + updatedJar.map { "\($0.key)=\($0.value)" }
        switch provider.capture(url: target, status: response.status, setCookies: known, body: text) {
        case .token(let token): return try await complete(id: id, token: token, provider: provider, context)
        case .denied(let code): return try await end(id: id, with: ErrorMapping.siteDenied(code), context)
        case nil: break
        }

        var out = HTTPFields()
        out[.cacheControl] = "no-store"
        out[.contentType] = contentType.isEmpty ? "application/octet-stream" : contentType
        out[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        // Whatever the provider serves (HTML, SVG, …) runs sandboxed, as an opaque origin: its scripts
        // cannot call the gateway's API with the user's session cookie; forms and navigations still work.
        // And no site may frame it (``PageFraming``): a provider's sign-in form under the gateway's address is
        // as good a clickjacking target as the gateway's own pages. A provider page that frames another of its
        // pages cannot be served this way: a sandboxed page is an opaque origin, which no `frame-ancestors`
        // source other than `*` matches, so there is nothing narrower to allow.
        out[PageFraming.contentSecurityPolicy] = "sandbox allow-scripts allow-forms allow-popups allow-modals"
        out = PageFraming.denying(out)
        out[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        let rewriter = rewriter(id: id, provider: provider)
        if let location = response.header("Location") {
            guard let rewritten = rewriter.location(location, base: target) else {
                throw GatehouseError(code: .originNotAllowed, status: 502, detail: "The provider redirected outside its configured origins.")
            }
            out[.location] = rewritten
        }
        var bodyData = response.body
        if var page = text {
            page = rewriter.html(page, currentOrigin: index)
            if let scripted = provider as? any PageScriptCapturing {
                page = LoginPageRewriter.inject(scripted.pageScript(captureURL: "/v1/pages/\(id)/capture"), into: page)
            }
            bodyData = Data(page.utf8)
        }
        let status = HTTPResponse.Status(code: response.status)
        return Response(status: status, headers: out, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bodyData)))
    }

    // MARK: Capture

    private func capture(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let id = try context.parameters.require("login")
        return try await withBoundEntry(id, request, context) { entry in try await capture(request, context, id: id, entry: entry) }
    }

    private func capture(_ request: Request, _ context: GatehouseRequestContext, id: String, entry: LoginPageJars.Entry) async throws -> Response {
        guard let provider = try pageProvider(entry.transaction.provider) as? any PageScriptCapturing else {
            throw GatehouseError.unsupported("This provider's pages post nothing to the gateway.")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: 65_536)
        } catch {
            throw GatehouseError.payloadTooLarge("The captured payload exceeds 64 KiB.")
        }
        let isForm = request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false
        guard let token = provider.capturedToken(fromPost: String(decoding: buffer.readableBytesView, as: UTF8.self), isForm: isForm) else {
            throw GatehouseError.invalidRequest("The post carries nothing to capture.")
        }
        // A form navigation: the answer is the end of the login itself.
        if isForm { return try await complete(id: id, token: token, provider: provider, context) }
        // A script that posted the string itself: hand it the redirect target, keep the session cookie.
        let finished = try await complete(id: id, token: token, provider: provider, asPage: false, context)
        var headers = HTTPFields()
        for cookie in finished.headers[values: .setCookie] { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return try JSONResponse.make(["location": finished.headers[.location] ?? "/"], headers: headers)
    }

    /// The site refused the sign-in: the login ends now, with that error, and no session.
    private func end(id: String, with failure: LoginFailure, _ context: GatehouseRequestContext) async throws -> Response {
        guard let entry = try await jars.take(id, now: clock.now()) else { throw Self.unknownLogin() }
        return try flow.fail(failure, transaction: entry.transaction, .pages, logger: context.logger)
    }

    /// Validates a captured token and ends the login (single use) like a redirect login. `asPage`: the
    /// browser navigated here (a failure is an error page), rather than a script that posted (a problem).
    private func complete(
        id: String, token: String, provider: any LoginPageProvider, asPage: Bool = true, _ context: GatehouseRequestContext
    ) async throws -> Response {
        guard let entry = try await jars.take(id, now: clock.now()) else { throw Self.unknownLogin() }
        let result: LoginResult
        do {
            result = try await provider.validateToken(token)
        } catch let error as ProviderError {
            return try flow.fail(
                ErrorMapping.loginFailure(error, at: .pageCapture), transaction: entry.transaction, .pages, asPage: asPage, logger: context.logger)
        }
        return try await flow.finish(result, transaction: entry.transaction, .pages, asPage: asPage, logger: context.logger)
    }
}
