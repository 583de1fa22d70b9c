import GatehouseCore

/// The one way adapters talk to their provider: sends over the provider's ``HTTPTransport`` (with an
/// optional deadline) and turns what every adapter treats alike into ``ProviderError``s.
///
/// - A provider that cannot be reached (or misses the deadline) is ``ProviderError/unavailable(_:)``, its
///   reason followed by the transport's error in parentheses (which names no query string: it may hold a token).
/// - When the call site asks for it, a 5xx answer is ``ProviderError/unavailable(_:)`` too ("try later").
/// - A body that must be a JSON object and is not is ``ProviderError/invalidResponse(_:)``.
///
/// Statuses whose meaning depends on the endpoint (401 of a probe, 404 of a discovery URL, RFC 6749
/// error bodies) stay with the adapter. Every message is the call site's: tests and logs rely on them.
///
/// ```swift
/// let response = try await context.http.send(
///     outgoing, unreachable: "userinfo endpoint unreachable", serverError: { "userinfo endpoint answered \($0)" })
/// let claims = try ProviderHTTP.jsonObject(of: response, otherwise: "userinfo is not a JSON object")
/// ```
struct ProviderHTTP: Sendable {
    let transport: any HTTPTransport
    /// A deadline for each exchange on top of the transport's own; nil leaves it to the transport.
    let timeout: Duration?

    init(transport: any HTTPTransport, timeout: Duration? = nil) {
        self.transport = transport
        self.timeout = timeout
    }

    /// Sends `request` and returns the provider's answer.
    /// - Parameters:
    ///   - unreachable: the reason of the ``ProviderError/unavailable(_:)`` thrown when the transport fails or the deadline passes.
    ///   - serverError: when given, a 5xx answer throws ``ProviderError/unavailable(_:)`` with this reason;
    ///     when nil, every answer is returned as it is.
    func send(
        _ request: TransportRequest, unreachable: @autoclosure () -> String, serverError: ((Int) -> String)? = nil
    ) async throws(ProviderError) -> TransportResponse {
        let response: TransportResponse
        do {
            response = try await exchange(request)
        } catch {
            // The reason and what failed, in words (a refused connection, an untrusted certificate, a deadline): the
            // reason reaches `/readyz` and problem details. The transport logged the library's own account.
            let failure = (error as? TransportError)?.description ?? (error is CancellationError ? "cancelled" : "the call failed")
            throw .unavailable("\(unreachable()) (\(failure))")
        }
        if let serverError, response.status >= 500 { throw .unavailable(serverError(response.status)) }
        return response
    }

    /// Sends an adapter-built request (its URL and headers, as a `GET`), like the `TransportRequest` overload.
    func send(
        _ outgoing: OutgoingRequest, unreachable: @autoclosure () -> String, serverError: ((Int) -> String)? = nil
    ) async throws(ProviderError) -> TransportResponse {
        try await send(TransportRequest(url: outgoing.url, headers: outgoing.headers), unreachable: unreachable(), serverError: serverError)
    }

    /// `GET url` with `Accept: application/json` (discovery documents, key sets, lists).
    static func jsonRequest(_ url: String) -> TransportRequest {
        TransportRequest(url: url, headers: [("Accept", "application/json")])
    }

    /// The body of `response` as a JSON object.
    /// - Throws: ``ProviderError/invalidResponse(_:)`` with `reason` when it is not one.
    static func jsonObject(of response: TransportResponse, otherwise reason: @autoclosure () -> String) throws(ProviderError) -> [String: JSONValue] {
        guard let members = response.json?.objectValue else { throw .invalidResponse(reason()) }
        return members
    }

    /// One exchange: the transport alone, or the transport racing the deadline.
    private func exchange(_ request: TransportRequest) async throws -> TransportResponse {
        guard let timeout else { return try await transport.send(request) }
        let transport = transport
        return try await withThrowingTaskGroup(of: TransportResponse.self) { group in
            group.addTask { try await transport.send(request) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TransportError("timed out after \(timeout)")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw TransportError("no response") }
            return first
        }
    }
}
