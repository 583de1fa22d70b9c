import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
public import Logging
import NIOCore
import Synchronization

/// A legacy relying-party site on loopback: `GET /login` shows a form; `POST /login` sets a session
/// cookie and the `oauth_token` cookie and redirects to `/welcome`, whose title is
/// `Success oauth_token=<token>`. `GET /api/me` with `Authorization: Bearer <token>` answers the user
/// (the `probe`); anything else is 401.
public final class StandInLegacySite: StandInLoopbackServer {
    /// The listener the site runs on.
    public let loopback: StandInLoopback<StandInLegacySite>
    private let tokens = Mutex<[String: String]>([:])

    public init(port: Int = 0, logger: Logger? = nil) {
        self.loopback = StandInLoopback(port: port, logger: logger, label: "gatehouse.demo.legacy") { $0.makeRouter() }
    }

    public var loginURL: String { baseURL + "/login" }

    /// Issues a token for `user` (tests that post a token themselves).
    public func issueToken(user: String) -> String {
        let token = RandomToken.make()
        tokens.withLock { $0[token] = user }
        return token
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/login") { _, _ in
            Response.html(
                """
                <!DOCTYPE html><html><head><title>Legacy site: sign in</title></head><body>
                <form method="post" action="/login"><input name="user" id="user" value="bob">
                <input type="password" name="password" id="password" value="secret"><button type="submit" id="signin">Sign in</button></form>
                <p><a id="elsewhere" href="https://elsewhere.example.test/">Elsewhere</a></p></body></html>
                """)
        }
        router.post("/login") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 65_536)
            let form = Dictionary(FormEncoding.decode(String(buffer: body)), uniquingKeysWith: { first, _ in first })
            guard let user = form["user"], !user.isEmpty, form["password"] == "secret" else {
                return Response.html(
                    "<html><head><title>Denied error=access_denied</title></head><body>Wrong password.</body></html>", status: .unauthorized)
            }
            let token = self.issueToken(user: user)
            var headers = HTTPFields()
            headers[.location] = "/welcome"
            headers.append(HTTPField(name: .setCookie, value: "site_session=s-\(user); Path=/; HttpOnly"))
            headers.append(HTTPField(name: .setCookie, value: "oauth_token=\(token); Path=/"))
            return Response(status: .found, headers: headers)
        }
        router.get("/welcome") { request, _ in
            let cookies = (request.headers[.cookie] ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let token = cookies.first(where: { $0.hasPrefix("oauth_token=") }).map({ String($0.dropFirst("oauth_token=".count)) }) else {
                return Response.html("<html><head><title>Not signed in</title></head><body></body></html>", status: .unauthorized)
            }
            return Response.html(
                "<!DOCTYPE html><html><head><title>Success oauth_token=\(token)&amp;state=x</title></head><body>Welcome back.</body></html>")
        }
        router.get("/api/me") { request, _ in
            let authorization = request.headers[.authorization] ?? ""
            guard authorization.hasPrefix("Bearer "), let user = self.tokens.withLock({ $0[String(authorization.dropFirst(7))] }) else {
                return Response.json(["error": .string("invalid_token")], status: .unauthorized)
            }
            return Response.json(["id": .string("user-\(user)"), "email": .string("\(user)@legacy.demo.test"), "name": .string(user)])
        }
        return router
    }
}
