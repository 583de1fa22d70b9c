import Foundation
import GatehouseCore

/// A validated `/authorize` request (query of the GET, or hidden fields of the login form's POST).
struct AuthorizationRequest: Sendable {
    /// Why an authorization request is refused.
    enum Failure: Error, Sendable {
        /// Client or redirect URI cannot be trusted: an error page, never a redirect (RFC 6749 §4.1.2.1).
        case page(String)
        /// Anything else goes back to the client's redirect URI.
        case redirect(redirectURI: String, state: String?, error: String, description: String)
    }

    var clientID: String
    var redirectURI: String
    var state: String
    var scope: [String]
    var codeChallenge: String

    /// The parameters to carry through the login form.
    var formFields: [(String, String)] {
        [
            ("response_type", "code"),
            ("client_id", clientID),
            ("redirect_uri", redirectURI),
            ("state", state),
            ("scope", scope.joined(separator: " ")),
            ("code_challenge", codeChallenge),
            ("code_challenge_method", "S256"),
        ]
    }

    /// Checks client and redirect URI first, so that no later error can redirect to an unchecked URI.
    static func parse(_ fields: [String: String], configuration: StandInOAuthServer.Configuration) -> Result<Self, Failure> {
        guard let clientID = fields["client_id"], !clientID.isEmpty else {
            return .failure(.page("The request has no client_id."))
        }
        guard clientID == configuration.clientID else {
            return .failure(.page("The client \(clientID) is not registered."))
        }
        let redirectURI: String
        if let given = fields["redirect_uri"], !given.isEmpty {
            guard isRegistered(redirectURI: given, configuration: configuration) else {
                return .failure(.page("The redirect_uri \(given) is not registered for this client."))
            }
            redirectURI = given
        } else if configuration.redirectURIs.count == 1 {
            // php-oauth: an omitted redirect_uri means the one registered.
            redirectURI = configuration.redirectURIs[0]
        } else {
            return .failure(.page("The request has no redirect_uri."))
        }

        let state = fields["state"].flatMap { $0.isEmpty ? nil : $0 }
        func refuse(_ error: String, _ description: String) -> Result<Self, Failure> {
            .failure(.redirect(redirectURI: redirectURI, state: state, error: error, description: description))
        }
        guard let responseType = fields["response_type"] else {
            return refuse("invalid_request", "response_type is missing")
        }
        guard responseType == "code" else {
            return refuse("unsupported_response_type", "only response_type=code is supported")
        }
        guard let state else {
            return refuse("invalid_request", "state is required")
        }
        guard let codeChallenge = fields["code_challenge"], !codeChallenge.isEmpty else {
            return refuse("invalid_request", "PKCE is required: code_challenge is missing")
        }
        // An absent method means `plain`, which RFC 9700 rules out.
        guard fields["code_challenge_method"] == "S256" else {
            return refuse("invalid_request", "code_challenge_method must be S256")
        }
        guard PKCE.isValidChallenge(codeChallenge) else {
            return refuse("invalid_request", "code_challenge is not an S256 challenge")
        }
        var scope = configuration.allowedScopes
        if let requested = fields["scope"], !requested.trimmingCharacters(in: .whitespaces).isEmpty {
            scope = requested.split(separator: " ").map(String.init)
            guard scope.allSatisfy(configuration.allowedScopes.contains) else {
                return refuse("invalid_scope", "the requested scope is not allowed for this client")
            }
        }
        return .success(Self(clientID: clientID, redirectURI: redirectURI, state: state, scope: scope, codeChallenge: codeChallenge))
    }

    /// Exact match against the registered list; loopback `http` URIs may use any port (RFC 8252 §7.3).
    static func isRegistered(redirectURI: String, configuration: StandInOAuthServer.Configuration) -> Bool {
        if configuration.redirectURIs.contains(redirectURI) { return true }
        guard configuration.allowLoopbackRedirectURIs, let components = URLComponents(string: redirectURI) else { return false }
        guard components.scheme == "http", components.user == nil, components.password == nil else { return false }
        return ["127.0.0.1", "::1", "[::1]"].contains(components.host ?? "")
    }
}
