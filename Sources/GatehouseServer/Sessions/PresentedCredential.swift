import GatehouseCore

/// The credential a request presents, as a front end reads it from the head (``SessionResolver/presented(authorization:cookies:csrf:method:proofs:target:)``):
/// the token, how it came, and what a key-bound session's proof is checked against.
struct PresentedCredential: Sendable {
    let token: String
    let presentation: SessionResolver.Presentation
    /// The `Authorization` value, byte for byte (a connection's ``CredentialMemo`` is kept by it); `nil` for the cookie.
    let authorization: String?
    /// The `DPoP` field's values; read only for `Authorization: DPoP`.
    let proofs: [String]
    /// The request a proof must name; `nil` unless the token came as `Authorization: DPoP`.
    let target: DPoPVerifier.Target?
}
