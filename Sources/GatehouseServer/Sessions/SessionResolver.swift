import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Turns the credentials of a request into its session, or refuses.
///
/// The token comes from `Authorization: Bearer …` (native clients) or from the session cookie (browsers).
/// With the cookie, unsafe methods must carry `X-CSRF`, which browsers send only same-origin or after a
/// CORS preflight. A plain type over header fields, so that any front end (the router's
/// ``SessionMiddleware``, a channel handler on the hot path) resolves sessions the same way.
struct SessionResolver: Sendable {
    static let csrfHeader = HTTPField.Name("X-CSRF")!
    let cookieName: String
    let sessions: SessionManager

    /// How the request presented its session token.
    enum Presentation: Sendable, Equatable {
        case bearer
        case cookie
    }

    /// The session of a request; throws `invalid_session` or `csrf_required`.
    func resolve(_ headers: HTTPFields, method: HTTPRequest.Method) async throws -> (ActiveSession, Presentation) {
        let (token, presentation) = try token(in: headers, method: method)
        return (try await sessions.authenticate(token: token), presentation)
    }

    /// The token a request presents and how.
    func token(in headers: HTTPFields, method: HTTPRequest.Method) throws -> (String, Presentation) {
        try token(
            authorization: headers[.authorization], cookies: headers[values: .cookie], csrf: headers[Self.csrfHeader],
            method: method.rawValue)
    }

    /// The same over plain values, for front ends that hold other header types: the `Authorization` value,
    /// the `Cookie` values, the `X-CSRF` value and the method.
    func token(
        authorization: String?, cookies: @autoclosure () -> [String], csrf: @autoclosure () -> String?, method: String
    ) throws -> (String, Presentation) {
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, ASCII.equalsIgnoringCase(parts[0], "bearer") else {
                throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>'.")
            }
            return (String(ASCII.trimmed(parts[1])), .bearer)
        }
        if let cookie = Cookies(from: cookies())[cookieName] {
            if !Self.safeMethods.contains(method), (csrf() ?? "").isEmpty {
                throw GatehouseError.forbidden(.csrfRequired, "A cookie-authenticated \(method) needs the X-CSRF header.")
            }
            return (cookie.value, .cookie)
        }
        throw GatehouseError.invalidSession("No session token: send 'Authorization: Bearer <token>' or the session cookie.")
    }

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS"]
}
