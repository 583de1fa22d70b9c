import GatehouseCore
import Hummingbird

/// Turns every error into `application/problem+json` (RFC 9457) with a stable `code` (``ErrorMapping``), or,
/// for a top-level navigation to a browser route (``BrowserNavigation``), into the HTML error page
/// (``ErrorPage``) with the same status and `code`. Both carry the request's id (`request_id`), as its
/// log lines do.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let problem = ErrorMapping.problem(for: error, logger: context.logger)
            guard BrowserNavigation.wantsPage(request) else { return Problem.response(problem, requestID: context.requestID) }
            var headers = Problem.headers(problem)
            headers[.contentType] = nil
            return ErrorPage.response(problem, requestID: context.requestID, title: BrowserNavigation.title(path: request.uri.path), headers: headers)
        }
    }
}
