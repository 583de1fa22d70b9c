/// The 201 body of `POST /v1/session`: `{"session_token","token_type","expires_in","session":{…}}`.
struct SessionGrantResponse: Decodable, Sendable {
    /// The part of the session view the client reads.
    struct Session: Decodable, Sendable {
        /// The identity part of the session view.
        struct Identity: Decodable, Sendable {
            var email: String?
        }

        var subject: String
        var provider: String?
        var identity: Identity?
    }

    var sessionToken: String
    var tokenType: String
    var expiresIn: Int?
    var session: Session

    enum CodingKeys: String, CodingKey {
        case session
        case sessionToken = "session_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
    }
}
