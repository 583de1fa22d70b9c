/// How adapters talk to their provider (token, userinfo, revocation endpoints): small buffered
/// exchanges. The server supplies an AsyncHTTPClient implementation; tests may supply their own.
///
/// ```swift
/// let response = try await transport.send(.form(url: tokenURL, ["grant_type": "refresh_token"]))
/// ```
public protocol HTTPTransport: Sendable {
    /// Sends a request and buffers the response (bounded by the implementation).
    /// Throws ``TransportError`` when the provider cannot be reached or does not answer in time.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
