/// A provider whose browser session (its own cookie) can be ended by sending the browser to a URL.
public protocol BrowserLogoutProvider: AuthProvider {
    /// Where to send the browser after the gateway session ended; the provider returns it to `returnTo`,
    /// carrying `state` when one is given (OIDC RP-Initiated Logout's `state`; a provider without one of its
    /// own gets it in `returnTo`'s query).
    func browserLogoutURL(for credential: Credential, returnTo: String, state: String?) -> String?
}

extension BrowserLogoutProvider {
    /// Without a `state`: the browser comes back to `returnTo` as it is.
    public func browserLogoutURL(for credential: Credential, returnTo: String) -> String? {
        browserLogoutURL(for: credential, returnTo: returnTo, state: nil)
    }
}
