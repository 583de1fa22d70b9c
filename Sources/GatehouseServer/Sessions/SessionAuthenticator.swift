import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Finds the session token of a request: `Authorization: Bearer …` (native clients) or the session
/// cookie (browsers). With the cookie, unsafe methods must carry `X-CSRF` (sent by browsers only
/// same-origin or after a CORS preflight).
struct SessionAuthenticator: Sendable {
    static let csrfHeader = HTTPField.Name("X-CSRF")!
    let cookieName: String

    func token(of request: Request) throws -> String {
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>'.")
            }
            return String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
        if let cookie = request.cookies[cookieName] {
            let safe: Set<HTTPRequest.Method> = [.get, .head, .options]
            if !safe.contains(request.method), (request.headers[Self.csrfHeader] ?? "").isEmpty {
                throw GatehouseError.forbidden("csrf_required", "A cookie-authenticated \(request.method.rawValue) needs the X-CSRF header.")
            }
            return cookie.value
        }
        throw GatehouseError.invalidSession("No session token: send 'Authorization: Bearer <token>' or the session cookie.")
    }
}
