import Foundation
import GatehouseCore

extension StandInSPiDServer {
    /// A validated `/flow/login` request (query of the GET, or hidden fields of the login form's POST).
    struct LoginRequest: Sendable {
        /// Why a login request is refused.
        enum Failure: Error, Sendable {
            /// Client or redirect URI cannot be trusted: a 400 page, never a redirect.
            case page(String)
            /// Anything else goes back to the redirect URI as `?error=…[&state=…]`.
            case redirect(redirectURI: String, state: String?, error: String)
        }

        var clientID: String
        var redirectURI: String
        var state: String?
        /// Where "Cancel" goes instead of `redirectURI`, when the client sent one.
        var cancelRedirectURI: String?
        /// nil: the client sent no PKCE challenge (SPiD clients are confidential; PKCE is optional).
        var codeChallenge: String?

        /// The parameters to carry through the login form.
        var formFields: [(String, String)] {
            var fields = [("client_id", clientID), ("response_type", "code"), ("redirect_uri", redirectURI)]
            if let state { fields.append(("state", state)) }
            if let cancelRedirectURI { fields.append(("cancel_redirect_uri", cancelRedirectURI)) }
            if let codeChallenge { fields += [("code_challenge", codeChallenge), ("code_challenge_method", "S256")] }
            return fields
        }

        /// Checks client and redirect URIs first, so that no later error can redirect to an unchecked URI.
        /// Extra parameters SDKs send (`grant_type`, `force`, `platform`, `locale`) are ignored.
        static func parse(_ fields: [String: String], configuration: Configuration) -> Result<Self, Failure> {
            guard let clientID = fields["client_id"], !clientID.isEmpty else {
                return .failure(.page("The request has no client_id."))
            }
            guard clientID == configuration.clientID else {
                return .failure(.page("Unknown client ID \(clientID)."))
            }
            guard let redirectURI = fields["redirect_uri"], !redirectURI.isEmpty else {
                return .failure(.page("The request has no redirect_uri."))
            }
            guard isRegistered(redirectURI: redirectURI, configuration: configuration) else {
                return .failure(.page("The redirect_uri \(redirectURI) is not registered for this client."))
            }
            let cancelRedirectURI = fields["cancel_redirect_uri"].flatMap { $0.isEmpty ? nil : $0 }
            if let cancelRedirectURI, !isRegistered(redirectURI: cancelRedirectURI, configuration: configuration) {
                return .failure(.page("The cancel_redirect_uri \(cancelRedirectURI) is not registered for this client."))
            }

            let state = fields["state"].flatMap { $0.isEmpty ? nil : $0 }
            func refuse(_ error: String) -> Result<Self, Failure> {
                .failure(.redirect(redirectURI: redirectURI, state: state, error: error))
            }
            guard fields["response_type"] == "code" else {
                return refuse("unsupported_response_type")
            }
            var codeChallenge: String?
            if let challenge = fields["code_challenge"], !challenge.isEmpty {
                // An absent method means `plain`, which RFC 9700 rules out.
                guard fields["code_challenge_method"] == "S256", PKCE.isValidChallenge(challenge) else {
                    return refuse("invalid_request")
                }
                codeChallenge = challenge
            }
            return .success(
                Self(clientID: clientID, redirectURI: redirectURI, state: state, cancelRedirectURI: cancelRedirectURI, codeChallenge: codeChallenge)
            )
        }

        /// Exact match against the registered list; any loopback `http` URI is accepted (RFC 8252 §7.3).
        static func isRegistered(redirectURI: String, configuration: Configuration) -> Bool {
            if configuration.redirectURIs.contains(redirectURI) { return true }
            guard let components = URLComponents(string: redirectURI) else { return false }
            guard components.scheme == "http", components.user == nil, components.password == nil else { return false }
            return ["127.0.0.1", "::1", "[::1]"].contains(components.host ?? "")
        }
    }
}
