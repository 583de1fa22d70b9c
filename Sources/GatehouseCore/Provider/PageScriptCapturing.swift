/// A login-page provider whose token only the page's own scripts see (ACS hands it to
/// `window.external.Notify`): the proxy puts the provider's script into every HTML page, before the
/// page's own scripts, and the script posts what it captured to the login's capture endpoint
/// (`POST /v1/pages/{login}/capture`), which validates it with ``TokenLoginProvider/validateToken(_:)``.
public protocol PageScriptCapturing: LoginPageProvider {
    /// The `<script>` element to inject; it posts what it captures to `captureURL`.
    func pageScript(captureURL: String) -> String
    /// The token in a post to the capture endpoint. `isForm`: a form navigation (the browser shows the
    /// answer); otherwise the raw body a script posted (it gets JSON back). Nil when the post holds none.
    func capturedToken(fromPost body: String, isForm: Bool) -> String?
}
