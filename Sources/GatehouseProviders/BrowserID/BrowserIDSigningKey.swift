import BigInt
import Crypto
public import Foundation
public import GatehouseCore
import _CryptoExtras

/// A private key that signs like a BrowserID IdP or browser: for the demo's stand-in IdP and for tests.
/// The gateway itself never signs BrowserID data.
///
/// DS128 keys can be derived from a seed exactly like PyBrowserID's `tests.support.get_keypair`
/// (x = SHA-1 of the seed, fixed jwcrypto group), so both produce the same key for a hostname.
/// Signing uses BigInt and is not constant-time: acceptable for demo and test keys only.
public struct BrowserIDSigningKey: Sendable {
    private enum Backing: Sendable {
        case dsa(p: BigUInt, q: BigUInt, g: BigUInt, x: BigUInt, y: BigUInt)
        case rsa(_RSA.Signing.PrivateKey, n: BigUInt, e: BigUInt)
    }

    private let backing: Backing

    /// The jwcrypto DS128 group (1024-bit p, 160-bit q), as in jwcrypto and PyBrowserID.
    static let ds128P = BigUInt(
        "ff600483db6abfc5b45eab78594b3533d550d9f1bf2a992a7a8daa6dc34f8045ad4e6e0c429d334eeeaaefd7e23d4810be00e4cc1492cba325ba81ff2d5a5b305a8d17eb3bf4a06a349d392e00d329744a5179380344e82a18c47933438f891e22aeef812d69c8f75e326cb70ea000c3f776dfdbd604638c2ef717fc26d02e17",
        radix: 16)!
    static let ds128Q = BigUInt("e21e04f911d1ed7991008ecaab3bf775984309c3", radix: 16)!
    static let ds128G = BigUInt(
        "c52a4a0ff3b7e61fdf1867ce84138369a6154f4afa92966e3c827e25cfa6cf508b90e5de419e1337e07a2e9e2a3cd5dea704d175f8ebf6af397d69e110b96afb17c7a03259329e4829b0d03bbc7896b15b4ade53e130858cc34d96269aa89041f409136c7242a38895c9d5bccad4f389af1d7a4bd1398bd072dffa896233397a",
        radix: 16)!

    /// A DS128 key derived from `seed` as PyBrowserID's `get_keypair(seed)` does.
    public static func dsa128(seed: String) -> BrowserIDSigningKey {
        let x = BigUInt(Data(Insecure.SHA1.hash(data: Data(seed.utf8))))
        return BrowserIDSigningKey(backing: .dsa(p: ds128P, q: ds128Q, g: ds128G, x: x, y: ds128G.power(x, modulus: ds128P)))
    }

    /// A fresh RSA key of `bits` (1024 or more), signing as `RS256` (PKCS#1 v1.5, SHA-256).
    public static func rsa(bits: Int = 2048) throws -> BrowserIDSigningKey {
        let key = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: bits))
        let primitives = try key.publicKey.getKeyPrimitives()
        return BrowserIDSigningKey(backing: .rsa(key, n: BigUInt(primitives.modulus), e: BigUInt(primitives.publicExponent)))
    }

    /// The JWS `alg`: `DS128` or `RS256`.
    public var algorithm: String {
        switch backing {
        case .dsa: "DS128"
        case .rsa: "RS256"
        }
    }

    /// The public key as BrowserID writes it (`algorithm` `DS` with hex p/q/g/y, or `RS` with decimal n/e).
    public var publicKey: [String: String] {
        switch backing {
        case .dsa(let p, let q, let g, _, let y):
            ["algorithm": "DS", "p": String(p, radix: 16), "q": String(q, radix: 16), "g": String(g, radix: 16), "y": String(y, radix: 16)]
        case .rsa(_, let n, let e):
            ["algorithm": "RS", "n": String(n), "e": String(e)]
        }
    }

    /// The private DSA exponent in hex (nil for RSA); lets tests compare with PyBrowserID's `get_keypair`.
    public var dsaPrivateExponentHex: String? {
        if case .dsa(_, _, _, let x, _) = backing { return String(x, radix: 16) }
        return nil
    }

    /// Signs the ASCII signing input of a JWS: `r ‖ s` (20 bytes each) for DS128, PKCS#1 v1.5 for RS256.
    public func sign(_ data: Data) -> Data {
        switch backing {
        case .dsa(let p, let q, let g, let x, _):
            let h = BigUInt(Data(Insecure.SHA1.hash(data: data)))
            while true {
                let k = BigUInt.randomInteger(lessThan: q)
                guard k > 0, let kInverse = k.inverse(q) else { continue }
                let r = g.power(k, modulus: p) % q
                guard r > 0 else { continue }
                let s = (kInverse * ((h + x * r) % q)) % q
                guard s > 0 else { continue }
                return Self.fixedWidth(r, 20) + Self.fixedWidth(s, 20)
            }
        case .rsa(let key, _, _):
            // Only fails for a key that cannot sign, which `rsa(bits:)` never makes.
            return (try? key.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation) ?? Data()
        }
    }

    /// `header.payload.signature` over a JSON payload, with header `{"alg":"<algorithm>"}`.
    public func compactJWS(_ payload: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = Base64URL.encode((try? encoder.encode(["alg": algorithm])) ?? Data())
        let body = Base64URL.encode((try? encoder.encode(JSONValue.object(payload))) ?? Data())
        let input = "\(header).\(body)"
        return "\(input).\(Base64URL.encode(sign(Data(input.utf8))))"
    }

    private static func fixedWidth(_ value: BigUInt, _ width: Int) -> Data {
        let bytes = value.serialize()
        return Data(repeating: 0, count: max(0, width - bytes.count)) + bytes
    }
}
