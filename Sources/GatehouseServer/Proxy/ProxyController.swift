import AsyncHTTPClient
import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import Prometheus
import NIOCore
import NIOHTTP1

/// `/v1/api/{path…}` (the backend, with the gateway's identity headers) and
/// `/v1/proxy/{provider}/{path…}` (the provider's own API, with the provider credential), both
/// streamed, with transparent refresh and one replay after an upstream 401.
struct ProxyController: Sendable {
    let gateway: Gateway

    private static let methods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .head, .options]
    private static let assertionHeader = "X-Gatehouse-Assertion"

    func addRoutes(to router: Router<GatehouseRequestContext>) {
        for method in Self.methods {
            router.on("/v1/api/**", method: method) { request, context in try await backend(request, context) }
            router.on("/v1/proxy/:provider/**", method: method) { request, context in try await providerAPI(request, context) }
        }
    }

    // MARK: Routes

    private func backend(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let session = try await authenticated(request)
        let backend = gateway.settings.backend
        // `/v1/api` is the route's own prefix: two segments.
        let url = try UpstreamPath.join(base: backend.url, rawPath: Substring(request.uri.path), droppingSegments: 2, query: request.uri.query.map { Substring($0) })
        // The backend only needs a fresh provider token when it receives one.
        let refresher = backend.forwardAccessToken ? refreshingProvider(for: session) : nil
        let response = try await exchange(request, context, session: session, url: url, refresher: refresher, attachment: backendHeaders)
        return makeResponse(response, dropCookies: false)
    }

    private func providerAPI(_ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let providerID = try context.parameters.require("provider")
        let provider = try gateway.provider(providerID)
        let session = try await authenticated(request)
        // A session may only reach the API of the provider it signed in with.
        guard session.provider == providerID else {
            throw GatehouseError.forbidden("provider_mismatch", "This session belongs to provider '\(session.provider)', not '\(providerID)'.")
        }
        guard let api = provider.descriptor.api else {
            throw GatehouseError.notFound("Provider '\(providerID)' has no api configured.")
        }
        // `/v1/proxy/{provider}`: three segments.
        let url = try UpstreamPath.join(base: api.url, rawPath: Substring(request.uri.path), droppingSegments: 3, query: request.uri.query.map { Substring($0) })
        let response = try await exchange(
            request, context, session: session, url: url, refresher: refreshingProvider(for: session),
            attachment: { session in providerAttachment(provider, session) })
        if response.status.code >= 400, let translator = provider as? any APIErrorTranslating {
            return try await translated(response, by: translator)
        }
        return makeResponse(response, dropCookies: true)
    }

    // MARK: Session

    private func authenticated(_ request: Request) async throws -> ActiveSession {
        let token = try SessionAuthenticator(cookieName: gateway.settings.cookie.name).token(of: request)
        return try await gateway.sessions.authenticate(token: token)
    }

    private func refreshingProvider(for session: ActiveSession) -> (any RefreshingProvider)? {
        guard session.credential.isRefreshable else { return nil }
        return gateway.providers.provider(session.provider) as? any RefreshingProvider
    }

    // MARK: Upstream request

    /// The same for both upstreams: refresh before sending when the credential is about to expire,
    /// send, and after a 401 refresh once and replay (when the body was buffered).
    private func exchange(
        _ request: Request, _ context: GatehouseRequestContext, session: ActiveSession, url: String,
        refresher: (any RefreshingProvider)?, attachment: (ActiveSession) -> Attachment
    ) async throws -> HTTPClientResponse {
        var session = session
        if let refresher, gateway.refreshPolicy.needsRefresh(session.credential, now: gateway.clock.now()) {
            session = try await gateway.refresher.refresh(session, provider: refresher, force: false)
        }
        let body = try await forwardBody(of: request)
        let response = try await send(request, context, url: url, body: body, attach: attachment(session))
        guard response.status.code == 401, body.isReplayable, let refresher else { return response }
        session = try await gateway.refresher.refresh(session, provider: refresher, force: false)
        return try await send(request, context, url: url, body: body, attach: attachment(session))
    }

    /// Adds what the upstream should see to the cleaned request.
    private typealias Attachment = @Sendable (inout OutgoingRequest) async throws -> Void

    private func backendHeaders(_ session: ActiveSession) -> Attachment {
        let gateway = self.gateway
        return { outgoing in
            let backend = gateway.settings.backend
            if backend.identityHeaders {
                outgoing.headers.append(("X-Gatehouse-Provider", session.provider))
                outgoing.headers.append(("X-Gatehouse-Subject", session.identity.subject))
                if let email = session.identity.email { outgoing.headers.append(("X-Gatehouse-Email", email)) }
            }
            if backend.assertion {
                outgoing.headers.append((Self.assertionHeader, try await gateway.signer.assertion(for: session, now: gateway.clock.now())))
            }
            if backend.forwardAccessToken {
                outgoing.headers.append(("X-Gatehouse-Access-Token", session.credential.accessToken))
            }
        }
    }

    private func providerAttachment(_ provider: any AuthProvider, _ session: ActiveSession) -> Attachment {
        { outgoing in provider.attach(session.credential, to: &outgoing) }
    }

    private func forwardBody(of request: Request) async throws -> ForwardBody {
        let limits = gateway.settings
        let length = request.headers[.contentLength].flatMap { Int($0) }
        if let length, length > limits.maxBodyBytes {
            throw GatehouseError.payloadTooLarge("The request body exceeds \(limits.maxBodyBytes) bytes.")
        }
        let hasBody = (length ?? 0) > 0 || request.headers[.transferEncoding] != nil
        guard hasBody else { return .empty }
        if let length, length <= limits.replayLimitBytes {
            var request = request
            return .buffered(try await request.collectBody(upTo: length))
        }
        return .streamed(request.body, length: length)
    }

    private func send(
        _ request: Request, _ context: GatehouseRequestContext, url: String, body: ForwardBody, attach: Attachment
    ) async throws -> HTTPClientResponse {
        var outgoing = OutgoingRequest(url: url, headers: forwardedHeaders(of: request, context))
        try await attach(&outgoing)
        var upstream = HTTPClientRequest(url: outgoing.url)
        upstream.method = HTTPMethod(rawValue: request.method.rawValue)
        for header in outgoing.headers { upstream.headers.add(name: header.name, value: header.value) }
        switch body {
        case .empty: break
        case .buffered(let buffer): upstream.body = .bytes(buffer)
        case .streamed(let stream, let length):
            let limited = BodySizeLimiter(base: stream, limit: gateway.settings.maxBodyBytes)
            upstream.body = .stream(limited, length: length.map { .known(Int64($0)) } ?? .unknown)
        }
        gateway.metrics.proxiedRequests.increment()
        do {
            return try await gateway.httpClient.execute(upstream, timeout: .milliseconds(Int64(gateway.settings.upstreamTimeout * 1000)))
        } catch let error as GatehouseError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            gateway.metrics.upstreamErrors.increment()
            throw GatehouseError.gatewayTimeout("The upstream did not answer in time.")
        } catch {
            gateway.metrics.upstreamErrors.increment()
            context.logger.warning("upstream request failed", metadata: ["upstream": "\(AsyncHTTPTransport.redacted(url))", "error": "\(error)"])
            throw GatehouseError.badGateway("The upstream could not be reached.")
        }
    }

    /// The client's headers minus hop-by-hop ones, credentials and anything claiming to be the gateway's.
    private func forwardedHeaders(of request: Request, _ context: GatehouseRequestContext) -> [(name: String, value: String)] {
        let dropped = HopByHopHeaders.names(in: request.headers)
        let cookieName = gateway.settings.cookie.name
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(request.headers.count + 6)
        for field in request.headers {
            let name = field.name.canonicalName
            if dropped.contains(name) || name.hasPrefix("x-gatehouse-") || name.hasPrefix("x-forwarded-") { continue }
            // CGI and WSGI servers fold `_` into `-` (`X_Gatehouse_Subject` is `X-Gatehouse-Subject` to
            // them): like nginx and Apache by default, no client header with an underscore passes.
            if name.utf8.contains(UInt8(ascii: "_")) { continue }
            switch name {
            case "host", "content-length", "authorization", "forwarded":
                continue
            case "cookie":
                // Keep the application's own cookies, never the gateway's session.
                let kept = field.value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.hasPrefix(cookieName + "=") }
                if !kept.isEmpty { headers.append(("Cookie", kept.joined(separator: "; "))) }
            default:
                headers.append((field.name.rawName, field.value))
            }
        }
        if let remote = context.remoteAddress { headers.append(("X-Forwarded-For", remote)) }
        headers.append(("X-Forwarded-Proto", gateway.settings.publicURL.hasPrefix("https") ? "https" : "http"))
        // The host the client reached is the gateway's public one, whatever `Host` the client sent.
        headers.append(("X-Forwarded-Host", gateway.settings.publicAuthority))
        return headers
    }

    // MARK: Response

    /// An error answer in the provider's own format becomes a problem with a stable code; anything
    /// the provider does not recognise goes back as it came (errors are small, so they are buffered).
    private func translated(_ upstream: HTTPClientResponse, by translator: any APIErrorTranslating) async throws -> Response {
        let body = (try? await upstream.body.collect(upTo: 256 * 1024)) ?? ByteBuffer()
        if let problem = translator.problem(forAPIStatus: Int(upstream.status.code), body: Data(body.readableBytesView)) {
            throw problem
        }
        var response = makeResponse(upstream, dropCookies: true)
        response.body = ResponseBody(byteBuffer: body)
        response.headers[.contentLength] = String(body.readableBytes)
        return response
    }

    private func makeResponse(_ upstream: HTTPClientResponse, dropCookies: Bool) -> Response {
        var names = HopByHopHeaders.names(listedIn: upstream.headers["connection"])
        if dropCookies { names.insert("set-cookie") }
        var fields = HTTPFields()
        for header in upstream.headers where !names.contains(header.name.lowercased()) {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        return Response(status: .init(code: Int(upstream.status.code)), headers: fields, body: ResponseBody(asyncSequence: upstream.body))
    }
}
