import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
import Logging

/// Turns every error into `application/problem+json` (RFC 9457) with a stable `code`. Errors that are
/// not ours become a bare 500, so provider or library text never reaches the client.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatehouseError {
            return Problem.response(error)
        } catch let error as StoreUnavailableError {
            context.logger.warning("session store unavailable", metadata: ["reason": "\(error.reason)"])
            return Problem.response(GatehouseError(
                code: "store_unavailable", status: 503, detail: "The session store cannot be reached. Try again shortly.", retryAfter: 5))
        } catch let error as HTTPError {
            let code: String
            switch error.status.code {
            case 404: code = "not_found"
            case 405: code = "method_not_allowed"
            case 413: code = "payload_too_large"
            default: code = error.status.code < 500 ? "invalid_request" : "internal_error"
            }
            return Problem.response(GatehouseError(code: code, status: error.status.code, detail: error.body ?? error.status.reasonPhrase))
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return Problem.response(GatehouseError(code: "internal_error", status: 500, detail: "Internal error."))
        }
    }
}
