import Hummingbird

/// Resolves the request's session once (``SessionResolver``) and puts it into the request context;
/// routes behind it read ``GatehouseRequestContext/session``. Requests without a valid session end here
/// with `invalid_session` (401) or `csrf_required` (403).
struct SessionMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let resolver: SessionResolver

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let (session, presentation) = try await resolver.resolve(request.headers, method: request.method, path: Substring(request.uri.path))
        context.session = ResolvedSession(session: session, presentation: presentation)
        context.logFields.session(provider: session.provider, id: session.id)
        return try await next(request, context)
    }
}
