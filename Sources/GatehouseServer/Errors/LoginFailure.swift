import GatehouseCore

/// How a login that cannot go on ends: what a native client hears at its redirect URI (an OAuth
/// `error` and `error_description`) and what a browser is shown (``problem``, as a page or a problem).
struct LoginFailure: Sendable, Equatable {
    /// The OAuth error code for the client's redirect URI (`access_denied`, `server_error`, …).
    var error: ProblemCode
    /// The `error_description`; safe to show.
    var description: String
    /// The answer for a browser.
    var problem: GatehouseError
}
