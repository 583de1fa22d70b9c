import GatehouseCore

/// Where a person signs in again to meet an access rule's `require:` (RFC 9470): the login of the session's own
/// provider, asked for the rule's `acr_values` and `max_age`, coming back to the refused target. One place builds it
/// for both front ends of `/v1/api` (a browser navigation is sent there, 303) and for `/v1/authz` (its
/// `X-Gatehouse-Sign-In`).
///
/// The login started there replaces the browser's session in place when the same person signs in (``LoginFlow``);
/// the rule is judged again on the next request, so a client that edits the query only gets a login that does not
/// meet it.
enum StepUpSignIn {
    /// `{public_url}/v1/auth/{provider}/login?return_to=…&acr_values=…&max_age=…`.
    static func url(publicURL: String, provider: String, returningTo target: Substring, requirement: StepUpRequirement) -> String {
        var url = "\(publicURL)/v1/auth/\(encoded(provider))/login?return_to=\(encoded(target))"
        if let acr = requirement.acr { url += "&acr_values=" + encoded(acr.joined(separator: " ")) }
        if let maxAge = requirement.maxAgeSeconds { url += "&max_age=\(maxAge)" }
        return url
    }

    /// A step-up refusal answered to a browser's navigation (`Sec-Fetch-Mode: navigate`, `GET` or `HEAD`) of a cookie
    /// session (not key-bound): the same refusal as a 303 to the login that can meet the rule. Any other error or
    /// request: `error` unchanged.
    static func redirecting(
        _ error: any Error, session: ActiveSession?, method: String, fetchMode: @autoclosure () -> String?, publicURL: String,
        target: @autoclosure () -> Substring
    ) -> any Error {
        // The request's fields are read only for a step-up refusal: every other refusal passes straight through.
        guard var refusal = error as? GatehouseError, refusal.code == .stepUpRequired, let requirement = refusal.stepUp,
            let session, session.record.dpopThumbprint == nil, method == "GET" || method == "HEAD",
            let fetchMode = fetchMode(), ASCII.equalsIgnoringCase(fetchMode, "navigate")
        else { return error }
        refusal.status = 303
        refusal.location = url(publicURL: publicURL, provider: session.provider, returningTo: target(), requirement: requirement)
        return refusal
    }

    private static func encoded(_ text: some StringProtocol) -> String {
        PercentEncoding.encode(text.utf8, keeping: PercentEncoding.isUnreserved)
    }
}
