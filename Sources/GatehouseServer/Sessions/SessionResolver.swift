import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Turns the credentials of a request into its session, or refuses.
///
/// The token comes from `Authorization: Bearer …` (native clients), `Authorization: DPoP …` with a proof
/// (native clients whose session is bound to their key, ``DPoPVerifier``) or from the session cookie
/// (browsers). With the cookie, unsafe methods must carry `X-CSRF`, which browsers send only same-origin or
/// after a CORS preflight. A plain type over header fields, so that any front end (the router's
/// ``SessionMiddleware``, a channel handler on the hot path) resolves sessions the same way.
struct SessionResolver: Sendable {
    static let csrfHeader = HTTPField.Name("X-CSRF")!
    let cookieName: String
    let sessions: SessionManager
    let dpop: DPoPVerifier

    /// How the request presented its session token.
    enum Presentation: Sendable, Equatable {
        case bearer
        /// `Authorization: DPoP`: a key-bound session, with a proof.
        case dpop
        case cookie
    }

    /// The session of a request to one of the gateway's own routes (the proof names `public_url` + `path`);
    /// throws `invalid_session`, `csrf_required`, `invalid_token`, `invalid_dpop_proof` or `use_dpop_nonce`.
    func resolve(_ headers: HTTPFields, method: HTTPRequest.Method, path: Substring) async throws -> (ActiveSession, Presentation) {
        try await resolve(headers, method: method, proofTarget: dpop.target(method: method.rawValue, path: path))
    }

    /// The same, for a proof that names another request than this one (`/v1/authz`: the original request).
    func resolve(_ headers: HTTPFields, method: HTTPRequest.Method, proofTarget: DPoPVerifier.Target) async throws -> (ActiveSession, Presentation) {
        let (token, presentation) = try token(in: headers, method: method)
        let session = try await sessions.authenticate(token: token)
        try await dpop.authorize(session, token: token, presentation: presentation, proofs: headers[values: DPoPVerifier.proofField], target: proofTarget)
        return (session, presentation)
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
            guard parts.count == 2 else {
                throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>'.")
            }
            if ASCII.equalsIgnoringCase(parts[0], "bearer") { return (String(ASCII.trimmed(parts[1])), .bearer) }
            if ASCII.equalsIgnoringCase(parts[0], "dpop") { return (String(ASCII.trimmed(parts[1])), .dpop) }
            throw GatehouseError.invalidSession("Present the session token as 'Authorization: Bearer <token>' or 'Authorization: DPoP <token>'.")
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
