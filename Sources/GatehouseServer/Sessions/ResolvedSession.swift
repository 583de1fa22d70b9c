/// The session a request was made with, as ``SessionMiddleware`` found it.
struct ResolvedSession: Sendable {
    var session: ActiveSession
    /// Whether it came as a bearer token or as the browser's cookie.
    var presentation: SessionResolver.Presentation
}
