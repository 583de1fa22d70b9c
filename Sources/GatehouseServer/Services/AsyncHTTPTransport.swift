import AsyncHTTPClient
import Foundation
import GatehouseCore
import Logging
import NIOCore
import NIOHTTP1
import ServiceContextModule
import Tracing

/// The adapters' ``HTTPTransport`` over AsyncHTTPClient: buffered, bounded, with a timeout.
struct AsyncHTTPTransport: HTTPTransport {
    let client: HTTPClient
    let timeout: TimeInterval
    /// Where the technical cause of a failed call goes; what the adapters (and so clients) get is words.
    let logger: Logger
    /// What the calls trust besides the client's own configuration; nil: the client's own.
    var trust: OutboundTrust? = nil
    /// The provider's `tls.ca_file`, trusted for its calls besides `outbound_tls`.
    var caFile: String? = nil
    /// Where a failed call is told (one line per outage); nil: a warning per failed call.
    var outages: ProviderOutageReporter? = nil
    /// Provider answers (tokens, userinfo) are small; anything larger is refused.
    let maxResponseBytes = 1 << 20

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        // Some provider APIs refuse requests without one (GitHub's answers 403).
        if !outgoing.headers.contains(name: "User-Agent") { outgoing.headers.add(name: "User-Agent", value: "Gatehouse") }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        guard let current = ServiceContext.current, let tracing = current.gatewayTracing else {
            // A call for an unsampled request carries its trace context, and makes no span.
            if let unsampled = UnsampledTrace.current { outgoing.headers.replaceOrAdd(name: TraceHeaders.traceparent, value: unsampled.traceparent) }
            return try await send(outgoing, request)
        }
        // A call made for a sampled request: its span (never its URL's query or a field's value), and its traceparent.
        let operation = ProviderCallOperation.of(request)
        let span = tracing.startChild("provider " + operation, of: current, kind: .client)
        span.updateAttributes { attributes in
            attributes["gatehouse.provider_call"] = operation
            attributes["http.request.method"] = request.method
            attributes["server.address"] = ProviderCallOperation.host(of: request.url)
        }
        tracing.inject(span.context, into: &outgoing.headers)
        defer { span.end() }
        do {
            let response = try await send(outgoing, request)
            span.attributes["http.response.status_code"] = response.status
            if response.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
            return response
        } catch {
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func send(_ outgoing: HTTPClientRequest, _ request: TransportRequest) async throws -> TransportResponse {
        var outgoing = outgoing
        do {
            outgoing.tlsConfiguration = try trust?.configuration(caFile: caFile)
            let response = try await client.execute(outgoing, timeout: .milliseconds(Int64(timeout * 1000)))
            let body = try await response.body.collect(upTo: maxResponseBytes)
            outages?.answered(request.url)
            return TransportResponse(
                status: Int(response.status.code),
                headers: response.headers.map { ($0.name, $0.value) },
                body: Data(body.readableBytesView))
        } catch {
            let cause = "\(request.method) \(Self.redacted(request.url)): \(error)"
            var metadata: Logger.Metadata = ["cause": "\(cause)"]
            // The request it was made for, so that its problem's request_id finds this cause.
            if let requestID = RequestScope.requestID { metadata["request_id"] = .string(requestID) }
            if let outages {
                outages.failed(request.url, cause: cause, metadata: metadata)
            } else {
                logger.warning("provider call failed", metadata: metadata)
            }
            throw TransportError(ConnectionFailure.words(error), cause: cause)
        }
    }

    /// The URL without its query, which may carry a token (SPiD's `oauth_token`).
    static func redacted(_ url: String) -> String {
        url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
    }
}
