public import GatehouseCore

/// `authorization_params` of an `oauth2` or `oidc` provider file: extra query parameters for the
/// authorization request, such as Google's `access_type: "offline"` and `prompt: "consent"` (needed for a
/// refresh token), `hd`, `login_hint` or `acr_values` (Pomerium's `idp_request_params`).
///
/// The parameters that carry the protocol's protections are the gateway's alone: a file cannot set them.
public enum AuthorizationRequestParameters {
    /// Set by the gateway for every login (or by `scopes`), or able to change how the answer comes back:
    /// `response_mode` (a `form_post` would bypass the callback's checks), `request`/`request_uri` (a
    /// request object would replace every parameter, state and PKCE included).
    public static let reserved: Set<String> = [
        "response_type", "client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method",
        "nonce", "response_mode", "request", "request_uri",
    ]

    /// Reads `authorization_params` (a mapping of names to strings); `[]` when absent. Names are kept in the
    /// file's order.
    public static func read(_ map: ConfigMap) throws -> [(String, String)] {
        guard let params = try map.map("authorization_params") else { return [] }
        var parameters: [(String, String)] = []
        if case .mapping(let entries) = params.node.value {
            for entry in entries {
                let value = try params.string(entry.key)  // read first: a reserved name is refused as such, not as unknown
                if reserved.contains(entry.key) {
                    let why = entry.key == "scope" ? "list them in 'scopes'" : "the gateway sets it, or it would bypass the login's checks"
                    try params.report(entry.key, "'\(params.qualified(entry.key))' cannot be set: \(why)")
                } else if let value {
                    parameters.append((entry.key, value))
                }
            }
        }
        try params.finish()
        return parameters
    }
}
