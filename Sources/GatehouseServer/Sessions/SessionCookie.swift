import GatehouseConfiguration

/// The browser session cookie: `HttpOnly; Secure; SameSite=Lax`, `__Host-` prefixed by default.
struct SessionCookie: Sendable {
    let settings: ServerSettings

    /// `Set-Cookie` value carrying a new session token.
    func setting(_ token: String) -> String {
        attributes("\(settings.cookie.name)=\(token)", maxAge: Int(settings.absoluteLifetime))
    }

    /// `Set-Cookie` value that removes the cookie.
    func clearing() -> String {
        attributes("\(settings.cookie.name)=", maxAge: 0)
    }

    private func attributes(_ pair: String, maxAge: Int) -> String {
        var parts = [pair, "Path=/", "HttpOnly", "SameSite=\(settings.cookie.sameSite.rawValue)", "Max-Age=\(maxAge)"]
        if settings.cookie.secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }
}
