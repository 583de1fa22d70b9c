import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// An error of the device endpoints in RFC 8628's form (RFC 6749 §5.2): `{"error": …, "error_description": …}`,
/// 400 unless said otherwise, never problem+json — device clients are OAuth clients.
struct DeviceGrantError: Error, Sendable, Encodable {
    var error: String
    var errorDescription: String
    var status: Int = 400
    /// The nonce a `use_dpop_nonce` answer carries.
    var nonce: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }

    static func invalidRequest(_ description: String) -> Self { .init(error: "invalid_request", errorDescription: description) }
    static func invalidGrant(_ description: String) -> Self { .init(error: "invalid_grant", errorDescription: description) }

    /// The error a problem thrown under a device endpoint stands for; nil for the server's own failures
    /// (5xx), which stay problems.
    static func from(_ problem: GatehouseError) -> Self? {
        switch problem.code {
        case .useDPoPNonce:
            return .init(error: "use_dpop_nonce", errorDescription: problem.detail, nonce: problem.dpopNonce)
        case .invalidDPoPProof:
            return .init(error: "invalid_dpop_proof", errorDescription: problem.detail)
        default:
            return problem.status < 500 ? .invalidRequest(problem.detail) : nil
        }
    }

    var response: Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        if let nonce { headers[DPoPVerifier.nonceField] = nonce }
        let body = (try? JSONResponse.encode(self)) ?? Data(#"{"error":"server_error"}"#.utf8)
        return Response(status: HTTPResponse.Status(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
