import GatehouseCore

/// The sign-in form the OAuth and SPiD stand-ins show, and the page they show instead of redirecting.
///
/// The form posts the credentials together with the original request (as hidden fields) back to `action`.
struct StandInLoginPage {
    /// The whole `<title>`.
    var title: String
    /// The `<h1>`.
    var heading: String
    /// The client asking for the sign-in.
    var clientID: String
    /// HTML that follows "The client `<id>`", e.g. `wants you to log in`.
    var clientAsks: String
    /// Where the form posts to.
    var action: String
    /// The account field: its label, `name` and `type` (nil: plain text).
    var identifier: (label: String, name: String, type: String?)
    /// The label of the button that signs in.
    var submit: String
    /// The second button: its `name` (sent with the value 1) and label.
    var dismiss: (name: String, label: String)
    /// The demo accounts and their passwords. A stand-in shows its throwaway passwords, so that a newcomer
    /// can sign in without reading code.
    var accounts: [(String, String)]
    /// The original request, sent back as hidden fields.
    var formFields: [(String, String)]
    /// Shown above the form, e.g. after a wrong password.
    var error: String?

    /// The page.
    var html: String {
        let hidden = formFields.map { name, value in
            #"<input type="hidden" name="\#(HTMLEscaping.escape(name))" value="\#(HTMLEscaping.escape(value))">"#
        }
        let accountList = accounts.sorted { $0.0 < $1.0 }
            .map { "\(HTMLEscaping.escape($0.0)) / \(HTMLEscaping.escape($0.1))" }
            .joined(separator: ", ")
        let message = error.map { #"<p class="error" role="alert">\#(HTMLEscaping.escape($0))</p>"# } ?? ""
        let type = identifier.type.map { #" type="\#($0)""# } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><title>\(HTMLEscaping.escape(title))</title></head>
            <body>
            <h1>\(HTMLEscaping.escape(heading))</h1>
            <p>The client <code>\(HTMLEscaping.escape(clientID))</code> \(clientAsks). \
            Demo accounts: \(accountList).</p>
            \(message)
            <form method="post" action="\(HTMLEscaping.escape(action))">
            \(hidden.joined(separator: "\n"))
            <label>\(identifier.label) <input name="\(identifier.name)"\(type) autocomplete="username" autofocus></label>
            <label>Password <input name="password" type="password" autocomplete="current-password"></label>
            <button type="submit">\(submit)</button>
            <button type="submit" name="\(dismiss.name)" value="1">\(dismiss.label)</button>
            </form>
            </body>
            </html>
            """
    }

    /// Shown instead of redirecting when the client or its redirect URI cannot be trusted.
    static func errorPage(title: String, message: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><title>\(HTMLEscaping.escape(title))</title></head>
        <body><h1>Invalid request</h1><p>\(HTMLEscaping.escape(message))</p></body>
        </html>
        """
    }
}
