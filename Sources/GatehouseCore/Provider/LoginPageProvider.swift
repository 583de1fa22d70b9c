/// A legacy provider whose login pages the gateway serves through itself, capturing the token
/// (`window.external.Notify`, an `oauth_token` cookie, the page title). Marked `legacy_capture`.
///
/// The server's login-page proxy fetches only ``allowedOrigins``, only inside a login transaction;
/// it owns the routes, the per-login cookie jar and the rewriting. The adapter only says where to
/// start, what to watch for, and validates what was captured (``TokenLoginProvider/validateToken(_:)``).
/// A kind whose token only the page's own scripts see also adopts ``PageScriptCapturing``.
public protocol LoginPageProvider: TokenLoginProvider {
    /// The page to start at.
    var loginURL: String { get }
    /// The URL a login actually starts at (a provider may discover it); default ``loginURL``.
    func loginStartURL() async throws -> String
    /// Origins (`scheme://host[:port]`, lowercase, default port omitted) the proxy may fetch from.
    var allowedOrigins: [String] { get }
    /// Looks for the token (or a refusal) in a proxied response: its final URL, status, `Set-Cookie`
    /// values and (HTML) body. Nil when this response carries neither.
    func capture(url: String, status: Int, setCookies: [String], body: String?) -> CaptureOutcome?
}

extension LoginPageProvider {
    public func loginStartURL() async throws -> String { loginURL }
    public func capture(url: String, status: Int, setCookies: [String], body: String?) -> CaptureOutcome? { nil }
}
