import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle

/// `redirect_http_listen`: a plain HTTP listener whose every answer is `308 Permanent Redirect` to
/// `public_url` with the request's path and query (the method and body are kept by a 308).
enum HTTPSRedirect {
    /// The redirect's target: `publicURL` and the request target when that is an origin-form path, else `publicURL/`.
    /// A path starting with `//` stays under `publicURL`'s host: it is appended after it.
    static func location(publicURL: String, target: String) -> String {
        target.hasPrefix("/") ? publicURL + target : publicURL + "/"
    }

    /// The listener's application.
    static func application(publicURL: String, host: String, port: Int, logger: Logger) -> some ApplicationProtocol & Service {
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let location = location(publicURL: publicURL, target: request.head.path ?? "/")
            return Response(status: .permanentRedirect, headers: [.location: location, .contentLength: "0", .connection: "close"])
        }
        return Application(responder: responder, configuration: .init(address: .hostname(host, port: port), serverName: "gatehouse"), logger: logger)
    }
}
