import GatehouseConfiguration
import GatehouseCore

/// The fields of an allowed forward-auth answer (`/v1/authz` → 200), the one list of both front ends: the
/// identity headers whatever `backend.identity_headers` says (the proxy decides what it copies upstream),
/// the assertion and, with `forward_access_token`, the access token; every identity name (and every field of
/// `identity_headers.claims`) present, empty
/// when unknown (Caddy 2.6's `copy_headers` sends an unresolved placeholder upstream for a name the answer
/// lacks); and `Cache-Control: no-store`.
enum ForwardAuthAnswer {
    /// The field of a 401 that names the sign-in page returning to the original request, for the proxy to
    /// send a browser to (nginx: `auth_request_set` + `error_page 401`).
    static let signInField = "X-Gatehouse-Sign-In"

    /// The sign-in page (`GET /v1/sign-in`) with `return_to` = the original request target.
    static func signInURL(publicURL: String, returningTo target: Substring) -> String {
        "\(publicURL)/v1/sign-in?return_to=" + PercentEncoding.encode(target.utf8, keeping: PercentEncoding.isUnreserved)
    }

    /// Calls `add` once per field, in answer order.
    static func fields(
        session: ActiveSession?, backend: ServerSettings.BackendSettings, assertion: String?, _ add: (_ name: String, _ value: String) -> Void
    ) {
        var named: Set<String> = []
        if let session {
            var settings = backend
            settings.identityHeaders = true
            BackendIdentityHeaders.add(for: session, backend: settings, assertion: assertion) { name, value in
                named.insert(name)
                add(name, value)
            }
        }
        for name in BackendIdentityHeaders.identityNames where !named.contains(name) { add(name, "") }
        for header in backend.claimHeaders where !named.contains(header.name) { add(header.name, "") }
        add("Cache-Control", "no-store")
    }
}
