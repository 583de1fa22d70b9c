/// A legacy provider whose login pages the gateway serves through itself, capturing the token
/// (`window.external.Notify`, an `oauth_token` cookie, the page title). Marked `legacy_capture`.
public protocol LoginPageProvider: TokenLoginProvider {
    /// The page to start at.
    var loginURL: String { get }
    /// Origins the login-page proxy may fetch from; anything else is refused.
    var allowedOrigins: [String] { get }
    /// A script to inject before the page's own scripts (the Notify shim), if any.
    var injectedScript: String? { get }
    /// Looks for the token in a proxied response: its URL, `Set-Cookie` values and body.
    func capture(url: String, setCookies: [String], body: String?) -> String?
}
