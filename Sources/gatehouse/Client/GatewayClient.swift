import AsyncHTTPClient
import Foundation
import GatehouseServer
import NIOCore
import NIOHTTP1

/// HTTP to one gateway (AsyncHTTPClient): no redirects followed, 30 s timeouts, the environment's proxy
/// (``ProxySettings``), DPoP proofs made per request, and a request retried once with a fresh proof when the
/// gateway asks for its nonce (`use_dpop_nonce`).
struct GatewayClient: Sendable {
    /// The gateway's base URL, normalized.
    let gateway: String
    private let http: HTTPClient

    /// The longest answer read.
    static let bodyLimit = 64 * 1024 * 1024

    private init(gateway: String, http: HTTPClient) {
        self.gateway = gateway
        self.http = http
    }

    /// Runs `body` with a client of `gateway`; the HTTP client is shut down before this returns.
    /// - Parameter caFile: `--ca-file`: trusted besides the system's roots and `SSL_CERT_FILE` / `SSL_CERT_DIR`.
    static func with<T: Sendable>(gateway: String, caFile: String? = nil, _ body: (GatewayClient) async throws -> T) async throws -> T {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(30), read: .seconds(30)))
        configuration.proxy = try ProxySettings.proxy(forGateway: gateway)
        do {
            configuration.tlsConfiguration = try OutboundTLS().configuration(caFile: caFile)
        } catch {
            throw ClientFailure(caFile.map { "--ca-file \($0): \(error)" } ?? "\(error)")
        }
        // A person waits at the terminal: a refused connection is reported at once, not retried for 30 s.
        configuration.connectionPool.retryConnectionEstablishment = false
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let result: T
        do {
            result = try await body(GatewayClient(gateway: gateway, http: http))
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        return result
    }

    /// Sends a request to `{gateway}{path}` and reads the whole answer.
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: the path below the gateway's base URL, starting with `/`, query included.
    ///   - headers: extra header fields.
    ///   - body: the request body, if any.
    ///   - authorization: the session token and DPoP key of the request.
    func send(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        authorization: RequestAuthorization = .none
    ) async throws -> GatewayResponse {
        let url = gateway + path
        var nonce = authorization.nonce
        var retried = false
        while true {
            var request = HTTPClientRequest(url: url)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let header = authorization.header { request.headers.replaceOrAdd(name: "Authorization", value: header) }
            if let key = authorization.dpopKey {
                let proof = try await key.proof(method: method.rawValue, url: url, accessToken: authorization.sessionToken, nonce: nonce)
                request.headers.replaceOrAdd(name: "DPoP", value: proof)
            }
            if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
            var response = try await execute(request, url: url)
            if let fresh = response.header("DPoP-Nonce") {
                nonce = fresh
                let askedForNonce = response.status == 401 || response.status == 400
                if authorization.dpopKey != nil, !retried, askedForNonce, response.problem?.code == "use_dpop_nonce" {
                    retried = true
                    continue
                }
            }
            response.dpopNonce = nonce
            return response
        }
    }

    private func execute(_ request: HTTPClientRequest, url: String) async throws -> GatewayResponse {
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            let buffer = try await response.body.collect(upTo: Self.bodyLimit)
            return GatewayResponse(
                url: url, status: Int(response.status.code), headers: response.headers.map { (name: $0.name, value: $0.value) },
                body: Data(buffer.readableBytesView), dpopNonce: nil)
        } catch let failure as ClientFailure {
            throw failure
        } catch {
            if let reason = ConnectionFailure.known(error) { throw ClientFailure("cannot connect to \(gateway): \(reason)") }
            // Words, not the library's codes (ConnectionFailure).
            throw ClientFailure("\(request.method.rawValue) \(url) failed: \(ConnectionFailure.words(error))")
        }
    }
}
