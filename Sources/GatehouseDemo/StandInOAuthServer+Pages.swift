extension StandInOAuthServer {
    /// The login form; it posts the credentials together with the original request back to `/authorize`.
    func loginPage(for request: AuthorizationRequest, error: String? = nil) -> String {
        let hidden = request.formFields.map { name, value in
            #"<input type="hidden" name="\#(HTMLEscaping.escape(name))" value="\#(HTMLEscaping.escape(value))">"#
        }
        // A stand-in: showing its throwaway passwords lets a newcomer sign in without reading code.
        let accounts = configuration.users.sorted { $0.key < $1.key }
            .map { "\(HTMLEscaping.escape($0.key)) / \(HTMLEscaping.escape($0.value))" }
            .joined(separator: ", ")
        let message = error.map { #"<p class="error" role="alert">\#(HTMLEscaping.escape($0))</p>"# } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><title>Stand-in OAuth server: sign in</title></head>
            <body>
            <h1>Sign in</h1>
            <p>The client <code>\(HTMLEscaping.escape(request.clientID))</code> asks for \
            <code>\(HTMLEscaping.escape(request.scope.joined(separator: " ")))</code>. \
            Demo accounts: \(accounts).</p>
            \(message)
            <form method="post" action="/authorize">
            \(hidden.joined(separator: "\n"))
            <label>Username <input name="username" autocomplete="username" autofocus></label>
            <label>Password <input name="password" type="password" autocomplete="current-password"></label>
            <button type="submit">Sign in</button>
            <button type="submit" name="deny" value="1">Deny</button>
            </form>
            </body>
            </html>
            """
    }

    /// Shown instead of redirecting when the client or its redirect URI cannot be trusted.
    static func errorPage(_ message: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><title>Stand-in OAuth server: error</title></head>
        <body><h1>Invalid request</h1><p>\(HTMLEscaping.escape(message))</p></body>
        </html>
        """
    }
}
