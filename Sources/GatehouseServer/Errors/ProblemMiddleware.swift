import GatehouseCore
import Hummingbird

/// Turns every error into `application/problem+json` (RFC 9457) with a stable `code` (``ErrorMapping``).
/// The body carries the request's id (`request_id`), as its log lines do.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Problem.response(ErrorMapping.problem(for: error, logger: context.logger), requestID: context.requestID)
        }
    }
}
