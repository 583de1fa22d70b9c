/// The JWKS that `GET /.well-known/jwks.json` serves: the public halves of the assertion signing keys.
struct PublishedKeySet: Encodable, Sendable {
    /// One P-256 public key (RFC 7517, RFC 7518 §6.2).
    struct Key: Encodable, Sendable {
        var kty = "EC"
        var crv = "P-256"
        var use = "sig"
        var alg = "ES256"
        var kid: String
        var x: String
        var y: String
    }

    var keys: [Key]
}
