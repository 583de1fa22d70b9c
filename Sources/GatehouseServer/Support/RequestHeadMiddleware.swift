import GatehouseCore
import HTTPTypes
import Hummingbird

/// Judges the request head before any route sees it: exactly one `Host` (RFC 9112 §3.2), a request
/// target within `maxURLBytes` (414) and a header section within `maxHeaderBytes` (431), each refused
/// with a problem document.
struct RequestHeadMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxHeaderBytes: Int
    let maxURLBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The first `Host` becomes the authority; any further one stays among the fields.
        guard request.head.authority != nil, request.headers[values: .host].isEmpty else {
            throw GatehouseError.invalidRequest("An HTTP/1.1 request needs exactly one Host header.")
        }
        let target = request.head.path?.utf8.count ?? 0
        guard target <= maxURLBytes else {
            throw GatehouseError(code: .uriTooLong, status: 414, detail: "The request target exceeds \(maxURLBytes) bytes.")
        }
        var size = 0
        for field in request.headers {
            size += field.name.rawName.utf8.count + field.value.utf8.count + 4
        }
        guard size <= maxHeaderBytes else {
            throw GatehouseError(code: .headersTooLarge, status: 431, detail: "The request headers exceed \(maxHeaderBytes) bytes.")
        }
        return try await next(request, context)
    }
}

private extension HTTPField.Name {
    static let host = HTTPField.Name("Host")!
}
