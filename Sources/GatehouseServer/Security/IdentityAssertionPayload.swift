import GatehouseCore
import JWTKit

/// The claims of `X-Gatehouse-Assertion`.
struct IdentityAssertionPayload: JWTPayload {
    var iss: IssuerClaim
    var aud: AudienceClaim
    var sub: SubjectClaim
    var email: String?
    /// The identity's groups; absent when it has none.
    var groups: [String]?
    var provider: String
    /// The session's id; absent for a provider-issued bearer token, which has no session.
    var sid: String?
    /// `"bearer"` for a provider-issued bearer token; absent for a session.
    var via: String?
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var jti: IDClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}
