import GatehouseCore
import HTTPTypes
import Hummingbird

/// Judges the request head before any route sees it, with the relay's rule (``RequestHeadLimits``): exactly
/// one `Host`, a request target within `maxURLBytes` (414), a header section within `maxHeaderBytes` (431).
struct RequestHeadMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxHeaderBytes: Int
    let maxURLBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The first `Host` becomes the authority; any further one stays among the fields.
        let hosts = (request.head.authority == nil ? 0 : 1) + request.headers[values: .host].count
        // Counted as the relay counts the head it reads: the `Host` field included.
        var size = request.head.authority.map { "Host".utf8.count + $0.utf8.count + 4 } ?? 0
        for field in request.headers {
            size += field.name.rawName.utf8.count + field.value.utf8.count + 4
        }
        if let refusal = RequestHeadLimits.refusal(
            hosts: hosts, targetBytes: request.head.path?.utf8.count ?? 0, fieldBytes: size, maxURLBytes: maxURLBytes, maxHeaderBytes: maxHeaderBytes)
        {
            throw refusal
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    fileprivate static let host = HTTPField.Name("Host")!
}
