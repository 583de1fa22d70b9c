import Crypto
import Foundation
import GatehouseCore

/// HS256 tokens, for the stand-in's "public key as HMAC secret" attack.
enum StandInOIDCHMAC {
    static func sign(_ claims: [String: JSONValue], hmacKey: Data, kid: String) -> String {
        let input =
            StandInOIDCSigningKey.encode(["alg": .string("HS256"), "typ": .string("JWT"), "kid": .string(kid)])
            + "." + StandInOIDCSigningKey.encode(claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: hmacKey))
        return input + "." + Base64URL.encode(Data(mac))
    }
}
