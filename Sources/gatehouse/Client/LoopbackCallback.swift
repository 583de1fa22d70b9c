/// The browser's return to the loopback redirect URI: `GET /callback?code=…&state=…`, or
/// `?error=…&error_description=…&state=…` when the sign-in failed.
struct LoopbackCallback: Sendable {
    var code: String?
    var state: String?
    var error: String?
    var errorDescription: String?

    /// The callback in a request target, or nil when the target's path is not `/callback`.
    init?(target: String) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.first == "/callback" else { return nil }
        let parameters = parts.count > 1 ? ClientEncoding.queryParameters(parts[1].prefix { $0 != "#" }) : [:]
        code = parameters["code"]
        state = parameters["state"]
        error = parameters["error"]
        errorDescription = parameters["error_description"]
    }
}
