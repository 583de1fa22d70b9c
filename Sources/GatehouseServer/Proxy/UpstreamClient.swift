import AsyncHTTPClient
import Foundation
import GatehouseConfiguration
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Prometheus
import ServiceContextModule
import Tracing

/// The hop to an upstream (the backend or a provider's API): what of the client's request goes on
/// (body limits, header hygiene, `X-Forwarded-*`), the call itself with its timeout and error mapping,
/// and what of the answer comes back. The seam the hot path's own transport replaces.
struct UpstreamClient: Sendable {
    let httpClient: HTTPClient
    let settings: ServerSettings
    let metrics: GatewayMetrics
    /// What calls trust (`outbound_tls`, a provider's `tls.ca_file`) when the upstream has no `tls:` of its own.
    let trust: OutboundTrust
    /// The clients of upstreams with a `server_name`.
    let serverNames: ServerNameClients
    /// The fields and failures of the upstream protocol, shared with the relay.
    private let upstreamProtocol: UpstreamProtocol
    private static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    private static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    private static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!

    init(httpClient: HTTPClient, settings: ServerSettings, metrics: GatewayMetrics, trust: OutboundTrust, serverNames: ServerNameClients) {
        self.httpClient = httpClient
        self.settings = settings
        self.metrics = metrics
        self.trust = trust
        self.serverNames = serverNames
        upstreamProtocol = UpstreamProtocol(settings: settings)
    }

    /// Adds what the upstream should see to the cleaned request (identity headers, a credential).
    typealias Attachment = @Sendable (inout OutgoingRequest) async throws -> Void

    func forwardBody(of request: Request) async throws -> ForwardBody {
        let length = request.headers[.contentLength].flatMap { Int($0) }
        if let length, length > settings.maxBodyBytes { throw UpstreamProtocol.Failure.bodyTooLarge(limit: settings.maxBodyBytes).error }
        let hasBody = (length ?? 0) > 0 || request.headers[.transferEncoding] != nil
        guard hasBody else { return .empty }
        if let length, length <= settings.replayLimitBytes {
            var request = request
            return .buffered(try await request.collectBody(upTo: length))
        }
        return .streamed(request.body, length: length)
    }

    /// What one upstream of `/v1/api` asks of the call: its time limit and its label in the metrics.
    struct Hop: Sendable {
        var timeout: TimeInterval
        var label: String
        /// The fields upstreams get from the gateway's claims (``UpstreamRoute/claimFields``): never the client's.
        var claimFields: [String] = []
        /// Its own `tls:` (an `https` URL only).
        var tls: UpstreamTLSPlan? = nil
    }

    /// Sends the request; `hop`: the upstream of `/v1/api` it goes to (`nil`: a provider's API, with `limits`'s timeout);
    /// `caFile`: the provider's `tls.ca_file`.
    func send(
        _ request: Request, _ context: GatehouseRequestContext, url: String, body: ForwardBody, hop: Hop? = nil, caFile: String? = nil,
        attach: Attachment
    ) async throws -> HTTPClientResponse {
        var outgoing = OutgoingRequest(url: url, headers: forwardedHeaders(of: request, context, withholding: hop?.claimFields ?? []))
        try await attach(&outgoing)
        let (client, target, tls) = try reach(outgoing.url, hop: hop, caFile: caFile, context)
        var upstream = HTTPClientRequest(url: target)
        upstream.tlsConfiguration = tls
        upstream.method = HTTPMethod(rawValue: request.method.rawValue)
        for header in outgoing.headers { upstream.headers.add(name: header.name, value: header.value) }
        switch body {
        case .empty: break
        case .buffered(let buffer): upstream.body = .bytes(buffer)
        case .streamed(let stream, let length):
            let limited = BodySizeLimiter(base: stream, limit: settings.maxBodyBytes)
            upstream.body = .stream(limited, length: length.map { .known(Int64($0)) } ?? .unknown)
        }
        metrics.proxiedRequests.increment()
        // A sampled request: the call is a span of it, and the upstream's parent (off: the client's fields went on as they came).
        var span: (any Span)? = nil
        if let current = ServiceContext.current, let tracing = current.gatewayTracing {
            let call = tracing.startChild("upstream " + (hop?.label ?? "provider_api"), of: current, kind: .client)
            tracing.inject(call.context, into: &upstream.headers)
            span = call
        } else if let unsampled = UnsampledTrace.current {
            // Unsampled: the client's trace context passes on as it came, or the new trace's replaces it.
            GatewayTracing.pass(unsampled, into: &upstream.headers)
        }
        defer { span?.end() }
        let started = ContinuousClock.now
        do {
            let response = try await client.execute(upstream, timeout: .milliseconds(Int64((hop?.timeout ?? settings.upstreamTimeout) * 1000)))
            span?.attributes["http.response.status_code"] = Int(response.status.code)
            metrics.upstream(
                hop?.label ?? (url.hasPrefix(settings.backend.url) ? "backend" : "provider_api"), duration: ContinuousClock.now - started)
            // This path never asks for an upgrade (`Upgrade` is hop-by-hop and dropped): a `101` (or any other
            // interim status as the answer) is the backend's mistake or an attempt at a raw connection.
            guard response.status.code >= 200 else {
                metrics.upstreamErrors.increment()
                context.logger.warning(
                    "the upstream answered with an interim status as its final answer; refused",
                    metadata: ["upstream": "\(AsyncHTTPTransport.redacted(url))", "status": "\(response.status.code)"])
                throw UpstreamProtocol.Failure.invalidSwitch.error
            }
            return response
        } catch let error as GatehouseError {
            if error.code == .invalidRequest {
                context.logger.info("the client's request body could not be read; nothing more was sent upstream")
            }
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            metrics.upstreamErrors.increment()
            if let hop { metrics.upstreamFailed(hop.label) }
            throw UpstreamProtocol.Failure.timeout.error
        } catch {
            metrics.upstreamErrors.increment()
            if let hop { metrics.upstreamFailed(hop.label) }
            context.logger.warning("upstream request failed", metadata: ["upstream": "\(AsyncHTTPTransport.redacted(url))", "error": "\(error)"])
            throw UpstreamProtocol.Failure.unreachable.error
        }
    }

    /// The client, URL and TLS configuration a call goes with: an upstream's own `tls:` (and, with `server_name`, the
    /// URL addressed to that name, on the client that connects it to the upstream's host), else the trust in force.
    /// A configuration that cannot be made (a file gone since it was checked) is a 502, logged with its cause.
    private func reach(
        _ url: String, hop: Hop?, caFile: String?, _ context: GatehouseRequestContext
    ) throws -> (HTTPClient, String, TLSConfiguration?) {
        do {
            guard let plan = hop?.tls else { return (httpClient, url, try trust.configuration(caFile: caFile)) }
            let tls = try plan.configuration.get()
            guard let named = plan.named, url.hasPrefix(named.origin) else { return (httpClient, url, tls) }
            return (serverNames.client(name: named.name, host: named.host), named.namedOrigin + url.dropFirst(named.origin.count), tls)
        } catch {
            metrics.upstreamErrors.increment()
            if let hop { metrics.upstreamFailed(hop.label) }
            context.logger.warning(
                "upstream TLS settings cannot be used: a file they name cannot be read",
                metadata: ["upstream": "\(AsyncHTTPTransport.redacted(url))", "error": "\(error)"])
            throw UpstreamProtocol.Failure.unreachable.error
        }
    }

    /// The client's headers as the upstream protocol forwards them (``UpstreamProtocol/forwardedFields(of:client:_:)``),
    /// and the request's id.
    private func forwardedHeaders(
        of request: Request, _ context: GatehouseRequestContext, withholding claimFields: [String]
    ) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(request.headers.count + 6)
        var client = UpstreamProtocol.Client(connection: request.headers[values: .connection], peer: context.remoteAddress)
        if !upstreamProtocol.trustedProxies.isEmpty {
            client.forwardedFor = request.headers[values: Self.xForwardedFor]
            client.forwardedProto = request.headers[Self.xForwardedProto]
            client.forwardedHost = request.headers[Self.xForwardedHost]
        }
        upstreamProtocol.forwardedFields(
            of: request.headers.lazy.map { (name: $0.name.rawName, value: $0.value) }, client: client, withholding: claimFields
        ) {
            headers.append(($0, $1))
        }
        headers.append(("X-Request-Id", context.requestID))
        return headers
    }

    /// The upstream's answer for the client, streamed; hop-by-hop headers (and, from a provider's API, its cookies) dropped.
    func makeResponse(_ upstream: HTTPClientResponse, dropCookies: Bool) -> Response {
        let listed = HopByHopHeaders.listed(in: upstream.headers["connection"])
        var fields = HTTPFields()
        for header in upstream.headers where UpstreamProtocol.passesToClient(header.name, listed: listed, dropCookies: dropCookies) {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        return Response(status: .init(code: Int(upstream.status.code)), headers: fields, body: ResponseBody(asyncSequence: upstream.body))
    }
}
