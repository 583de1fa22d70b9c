extension StandInSPiDServer {
    /// The login form; it posts the credentials together with the original request back to `action`.
    func loginPage(for request: LoginRequest, action: String, error: String? = nil) -> String {
        StandInLoginPage(
            title: "Stand-in SPiD: log in",
            heading: "Log in with your SPiD account",
            clientID: request.clientID,
            clientAsks: "wants you to log in",
            action: action,
            identifier: (label: "E-mail", name: "email", type: "email"),
            submit: "Log in",
            dismiss: (name: "cancel", label: "Cancel"),
            accounts: configuration.users.map { ($0.key, $0.value.password) },
            formFields: request.formFields,
            error: error
        ).html
    }

    /// Shown instead of redirecting when the client or its redirect URI cannot be trusted.
    static func errorPage(_ message: String) -> String {
        StandInLoginPage.errorPage(title: "Stand-in SPiD: error", message: message)
    }
}
