/// The request a task is working for, for log lines written where no request context reaches (a provider
/// call's transport): the router's outermost layer sets it around each request (``AccessLogMiddleware``), and
/// tasks the request starts inherit it.
enum RequestScope {
    /// The current request's id (``RequestIdentifier``); `nil` outside a request (start-up, reloads, timers).
    @TaskLocal static var requestID: String?
}
