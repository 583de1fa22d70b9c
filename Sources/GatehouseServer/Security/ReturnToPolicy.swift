import GatehouseCore

/// Browser logins return to a same-origin path (no scheme, no host, no `//`: no open redirect), or to a URL on
/// an origin `access.return_to_origins` lists (forward authentication).
enum ReturnToPolicy {
    /// The one rule for `return_to`: a login accepts it, and the sign-in page links with it, only when this holds.
    static func accepts(_ returnTo: String, access: AccessPolicy) -> Bool {
        isSafe(returnTo) || access.allowsReturn(to: returnTo)
    }

    static func isSafe(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.hasPrefix("/\\") else { return false }
        return !path.contains("\\") && !path.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }
}
