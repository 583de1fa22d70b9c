/// The 201 body of every sign-in that hands a token to the client (`POST /v1/session`, assertions, tokens).
struct SessionGrant: Encodable, Sendable {
    var sessionToken: String
    var tokenType = "Bearer"
    var expiresIn: Int
    var session: SessionView

    enum CodingKeys: String, CodingKey {
        case session
        case sessionToken = "session_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
    }
}
