extension StandInSPiDServer {
    /// The login form; it posts the credentials together with the original request back to `action`.
    func loginPage(for request: LoginRequest, action: String, error: String? = nil) -> String {
        let hidden = request.formFields.map { name, value in
            #"<input type="hidden" name="\#(HTMLEscaping.escape(name))" value="\#(HTMLEscaping.escape(value))">"#
        }
        // A stand-in: showing its throwaway passwords lets a newcomer sign in without reading code.
        let accounts = configuration.users.sorted { $0.key < $1.key }
            .map { "\(HTMLEscaping.escape($0.key)) / \(HTMLEscaping.escape($0.value.password))" }
            .joined(separator: ", ")
        let message = error.map { #"<p class="error" role="alert">\#(HTMLEscaping.escape($0))</p>"# } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><title>Stand-in SPiD: log in</title></head>
            <body>
            <h1>Log in with your SPiD account</h1>
            <p>The client <code>\(HTMLEscaping.escape(request.clientID))</code> wants you to log in. \
            Demo accounts: \(accounts).</p>
            \(message)
            <form method="post" action="\(HTMLEscaping.escape(action))">
            \(hidden.joined(separator: "\n"))
            <label>E-mail <input name="email" type="email" autocomplete="username" autofocus></label>
            <label>Password <input name="password" type="password" autocomplete="current-password"></label>
            <button type="submit">Log in</button>
            <button type="submit" name="cancel" value="1">Cancel</button>
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
        <head><meta charset="utf-8"><title>Stand-in SPiD: error</title></head>
        <body><h1>Invalid request</h1><p>\(HTMLEscaping.escape(message))</p></body>
        </html>
        """
    }
}
