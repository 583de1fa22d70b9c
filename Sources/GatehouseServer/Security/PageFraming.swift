import HTTPTypes

/// No page the gateway renders may be shown inside another site's frame: the sign-in chooser, the sign-out
/// button, the error pages and the provider pages of the login-page proxy would otherwise be clickjacking
/// targets (a transparent frame over a decoy, and the user's click signs in, signs out or approves).
///
/// Both headers, because browsers that predate CSP level 2 know only `X-Frame-Options`, and CSP's
/// `frame-ancestors` wins where both are understood. A page that already has a policy gets the directive
/// added to it (a second `Content-Security-Policy` field would be a second policy, which is harder to read).
enum PageFraming {
    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let directive = "frame-ancestors 'none'"

    /// `fields` with `frame-ancestors 'none'` in its policy (added to it, or replacing another
    /// `frame-ancestors`) and `X-Frame-Options: DENY`.
    static func denying(_ fields: HTTPFields) -> HTTPFields {
        var fields = fields
        fields[contentSecurityPolicy] = policy(adding: fields[contentSecurityPolicy])
        fields[xFrameOptions] = "DENY"
        return fields
    }

    /// `policy` with its `frame-ancestors` directive (if any) replaced by ``directive``; only it when `policy` is nil.
    static func policy(adding policy: String?) -> String {
        guard let policy else { return directive }
        var directives = policy.split(separator: ";").map { ASCII.trimmed($0) }.filter { !$0.isEmpty }
        directives.removeAll { $0.split(separator: " ", maxSplits: 1).first.map { ASCII.equalsIgnoringCase($0, "frame-ancestors") } == true }
        directives.append(Substring(directive))
        return directives.joined(separator: "; ")
    }
}
