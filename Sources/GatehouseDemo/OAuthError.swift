import GatehouseCore
import HTTPTypes

/// An OAuth error as the token, revocation and resource endpoints report it (RFC 6749 §5.2, RFC 6750 §3).
struct OAuthError: Error, Sendable, Equatable {
    var code: String
    var description: String
    var status: HTTPResponse.Status

    static func invalidRequest(_ description: String) -> Self { .init(code: "invalid_request", description: description, status: .badRequest) }
    static func invalidClient(_ description: String) -> Self { .init(code: "invalid_client", description: description, status: .unauthorized) }
    static func invalidGrant(_ description: String) -> Self { .init(code: "invalid_grant", description: description, status: .badRequest) }
    static func invalidScope(_ description: String) -> Self { .init(code: "invalid_scope", description: description, status: .badRequest) }
    static func unsupportedGrantType(_ description: String) -> Self {
        .init(code: "unsupported_grant_type", description: description, status: .badRequest)
    }
    static func invalidToken(_ description: String) -> Self { .init(code: "invalid_token", description: description, status: .unauthorized) }
    static func insufficientScope(_ description: String) -> Self {
        .init(code: "insufficient_scope", description: description, status: .forbidden)
    }

    /// The JSON body: `{"error", "error_description"}`.
    var body: [String: JSONValue] {
        ["error": .string(code), "error_description": .string(description)]
    }
}
