import GatehouseCore

extension StandInOAuthServer {
    /// The login form; it posts the credentials together with the original request back to `/authorize`.
    func loginPage(for request: AuthorizationRequest, error: String? = nil) -> String {
        let scope = HTMLEscaping.escape(request.scope.joined(separator: " "))
        return StandInLoginPage(
            title: "Stand-in OAuth server: sign in",
            heading: "Sign in",
            clientID: request.clientID,
            clientAsks: "asks for <code>\(scope)</code>",
            action: "/authorize",
            identifier: (label: "Username", name: "username", type: nil),
            submit: "Sign in",
            dismiss: (name: "deny", label: "Deny"),
            accounts: configuration.users.map { ($0.key, $0.value) },
            formFields: request.formFields,
            error: error
        ).html
    }

    /// Shown instead of redirecting when the client or its redirect URI cannot be trusted.
    static func errorPage(_ message: String) -> String {
        StandInLoginPage.errorPage(title: "Stand-in OAuth server: error", message: message)
    }
}
