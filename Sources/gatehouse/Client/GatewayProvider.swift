/// One provider of `GET /v1/providers`: `{"id","kind","name","login":"redirect|assertion|token","capabilities":{…}}`.
struct GatewayProvider: Decodable, Sendable {
    /// The body of `GET /v1/providers`.
    struct List: Decodable, Sendable {
        var providers: [GatewayProvider]
    }

    var id: String
    var kind: String
    var name: String
    /// `redirect`, `assertion` or `token`.
    var login: String

    /// The endpoint a client uses to sign in with this provider when it is not a browser redirect.
    var nonRedirectEndpoint: String? {
        switch login {
        case "redirect": nil
        case "assertion": "POST /v1/auth/\(id)/assertion"
        case "token": "POST /v1/auth/\(id)/token"
        default: "the provider's own login style (\(login))"
        }
    }

    /// Picks the provider to sign in with: the one named, or the only redirect provider.
    static func choose(_ name: String?, from providers: [GatewayProvider], gateway: String) throws -> GatewayProvider {
        let listing = providers.map { "\($0.id) (\($0.login))" }.joined(separator: ", ")
        if let name {
            guard let provider = providers.first(where: { $0.id == name }) else {
                throw ClientFailure("\(gateway) has no provider '\(name)'; it has: \(listing.isEmpty ? "none" : listing)")
            }
            if let endpoint = provider.nonRedirectEndpoint {
                throw ClientFailure(
                    "provider '\(provider.id)' signs in with \(provider.login == "assertion" ? "an assertion" : provider.login == "token" ? "a token" : "another flow"), "
                        + "not a browser redirect: a client must use \(endpoint) instead")
            }
            return provider
        }
        let redirects = providers.filter { $0.login == "redirect" }
        switch redirects.count {
        case 1:
            return redirects[0]
        case 0:
            throw ClientFailure("\(gateway) has no provider that signs in by browser redirect (it has: \(listing.isEmpty ? "none" : listing))")
        default:
            throw ClientFailure(
                "\(gateway) has several providers, pick one with --provider: \(redirects.map { "\($0.id) (\($0.name))" }.joined(separator: ", "))")
        }
    }
}
