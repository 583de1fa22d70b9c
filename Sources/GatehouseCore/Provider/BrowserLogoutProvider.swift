/// A provider whose browser session (its own cookie) can be ended by sending the browser to a URL.
public protocol BrowserLogoutProvider: AuthProvider {
    /// Where to send the browser after the gateway session ended; the provider returns it to `returnTo`.
    func browserLogoutURL(for credential: Credential, returnTo: String) -> String?
}
