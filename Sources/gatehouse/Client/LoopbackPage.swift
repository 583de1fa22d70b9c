import GatehouseCore
import NIOHTTP1

/// The small HTML page the loopback listener answers the browser with.
struct LoopbackPage: Sendable {
    var status: HTTPResponseStatus
    var title: String
    var message: String

    /// The sign-in worked: the tab can be closed.
    static func signedIn(_ message: String) -> LoopbackPage {
        LoopbackPage(status: .ok, title: "Signed in", message: message + " You can close this tab and return to the terminal.")
    }

    /// The sign-in failed.
    static func failed(_ message: String) -> LoopbackPage {
        LoopbackPage(status: .badRequest, title: "Sign-in failed", message: message + " Return to the terminal and run gatehouse login again.")
    }

    /// Any other path (a favicon, a stray request).
    static let notFound = LoopbackPage(status: .notFound, title: "Not found", message: "This address only receives the sign-in callback.")

    /// The whole page, UTF-8.
    var html: String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Gatehouse: \(HTMLEscaping.escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}</style></head>
        <body><h1>\(HTMLEscaping.escape(title))</h1><p>\(HTMLEscaping.escape(message))</p></body></html>

        """
    }

}
