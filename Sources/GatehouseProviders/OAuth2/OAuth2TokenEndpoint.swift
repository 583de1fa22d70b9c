import Foundation
import GatehouseCore

/// Calls the token and revocation endpoints with the configured client authentication and turns
/// RFC 6749 §5.2 errors into ``ProviderError``s.
struct OAuth2TokenEndpoint: Sendable {
    let configuration: OAuth2Provider.Configuration
    let context: ProviderContext

    /// POSTs a token request; returns the JSON body of a 200.
    func request(_ fields: [(String, String)]) async throws -> JSONValue {
        let response = try await post(url: configuration.tokenEndpoint, fields: fields)
        guard response.status == 200 else { throw Self.error(from: response) }
        guard let json = response.json, json.objectValue != nil else {
            throw ProviderError.invalidResponse("The token endpoint's answer is not a JSON object.")
        }
        return json
    }

    /// RFC 7009: 200 for success and for unknown tokens; 503 means the token is still valid.
    func revoke(token: String, hint: String, endpoint: String) async throws {
        let response = try await post(url: endpoint, fields: [("token", token), ("token_type_hint", hint)])
        guard response.status == 200 else { throw Self.error(from: response) }
    }

    /// POSTs a form to one of the provider's endpoints with the client authentication of the token endpoint
    /// (the token, revocation and RFC 7662 introspection endpoints authenticate the client alike).
    func post(url: String, fields: [(String, String)]) async throws -> TransportResponse {
        var fields = fields
        var headers: [(name: String, value: String)] = []
        switch configuration.clientAuthentication {
        case .clientSecretBasic:
            // RFC 6749 §2.3.1: id and secret are form-encoded before Basic.
            let pair = "\(FormEncoding.escape(configuration.clientID)):\(FormEncoding.escape(configuration.clientSecret ?? ""))"
            headers.append(("Authorization", "Basic \(Data(pair.utf8).base64EncodedString())"))
        case .clientSecretPost:
            fields += [("client_id", configuration.clientID), ("client_secret", configuration.clientSecret ?? "")]
        case .none:
            fields.append(("client_id", configuration.clientID))
        }
        return try await context.http.send(.form(url: url, fields, headers: headers), unreachable: "The provider could not be reached.")
    }

    /// Maps an error answer: `invalid_grant` ends the session, 5xx and 429 are "try later".
    static func error(from response: TransportResponse) -> ProviderError {
        if response.status >= 500 || response.status == 429 {
            return .unavailable("The provider answered \(response.status).")
        }
        let json = response.json
        let code = json?["error"]?.stringValue ?? "http_\(response.status)"
        let description = json?["error_description"]?.stringValue ?? "The provider answered \(response.status)."
        if code == "invalid_grant" { return .invalidGrant(description) }
        return .rejected(code: code, description: description)
    }
}
