import GatehouseCore
import HTTPTypes
import Hummingbird

/// CORS for an allow-list of origins (`cors.allowed_origins`): the request's own origin is echoed
/// only when it is listed, with credentials allowed (browsers send the session cookie), and
/// preflights are answered here. Other origins get no CORS headers, so browsers keep them out.
struct CORSPolicyMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowedOrigins: Set<String>
    private let allowMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    private let allowHeaders = "Authorization, Content-Type, X-CSRF"

    /// - Parameter allowedOrigins: as configured; kept as ``WebOrigin`` spells them (lowercase, no default
    ///   port), which is how browsers send `Origin`.
    init(allowedOrigins: [String]) {
        self.allowedOrigins = Set(allowedOrigins.compactMap(WebOrigin.of))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], allowedOrigins.contains(origin) else {
            return try await next(request, context)
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var response = Response(status: .noContent)
            decorate(&response.headers, origin: origin)
            response.headers[.accessControlAllowMethods] = allowMethods
            response.headers[.accessControlAllowHeaders] = allowHeaders
            response.headers[.accessControlMaxAge] = "600"
            return response
        }
        var response = try await next(request, context)
        decorate(&response.headers, origin: origin)
        return response
    }

    private func decorate(_ headers: inout HTTPFields, origin: String) {
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlAllowCredentials] = "true"
        headers[.vary] = "Origin"
    }
}
