import GatehouseCore
import Hummingbird

/// Refuses requests whose header section is larger than `limits.max_header_bytes` (431).
struct HeaderLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxHeaderBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var size = request.head.path?.utf8.count ?? 0
        for field in request.headers {
            size += field.name.rawName.utf8.count + field.value.utf8.count + 4
        }
        guard size <= maxHeaderBytes else {
            throw GatehouseError(code: "headers_too_large", status: 431, detail: "The request headers exceed \(maxHeaderBytes) bytes.")
        }
        return try await next(request, context)
    }
}
