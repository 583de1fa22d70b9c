public import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird
public import Logging
import NIOCore

/// A BrowserID identity provider on loopback, for `gatehouse demo` and tests: it serves its support
/// document at `/.well-known/browserid` and mints backed assertions (`<certificate>~<assertion>`) for
/// any address at its domain, signed the way BrowserID does (the IdP key certifies the user key; the
/// user key signs the assertion).
///
/// The keys are given as ``Signer`` values, because this module does not do big-number cryptography;
/// `GatehouseProviders`' `BrowserIDSigningKey` provides them:
///
/// ```swift
/// func signer(_ key: BrowserIDSigningKey) -> StandInBrowserIDIdP.Signer {
///     .init(algorithm: key.algorithm, publicKey: key.publicKey, sign: key.sign)
/// }
/// let idp = StandInBrowserIDIdP(domain: "browserid.demo.test",
///     issuerKey: signer(.dsa128(seed: "browserid.demo.test")), userKey: signer(.dsa128(seed: "demo-user")))
/// try await idp.start()
/// let assertion = idp.mintAssertion(email: "alice@browserid.demo.test", audience: "http://127.0.0.1:8080")
/// ```
///
/// The gateway fetches support documents over `https` only, so it trusts this IdP through a pinned
/// `support_document_file` holding ``supportDocument``. `GET /assertion?email=…&audience=…` mints an
/// assertion over HTTP too, for trying the flow with curl.
public final class StandInBrowserIDIdP: StandInLoopbackServer {
    /// A signing key seen from outside: its `alg`, its public key members and its signing function.
    public struct Signer: Sendable {
        /// The JWS `alg` (`DS128`, `RS256`, …).
        public var algorithm: String
        /// The public key as BrowserID writes it (`{"algorithm":"DS","p",…}`).
        public var publicKey: [String: String]
        /// Signs the ASCII signing input of a JWS.
        public var sign: @Sendable (Data) -> Data

        /// Creates a signer.
        public init(algorithm: String, publicKey: [String: String], sign: @escaping @Sendable (Data) -> Data) {
            self.algorithm = algorithm
            self.publicKey = publicKey
            self.sign = sign
        }
    }

    /// The IdP's domain: the certificates' `iss` and the domain of the addresses it certifies.
    public let domain: String
    let issuerKey: Signer
    let userKey: Signer
    /// The listener the IdP runs on.
    public let loopback: StandInLoopback<StandInBrowserIDIdP>

    /// Creates a stopped IdP.
    /// - Parameters:
    ///   - domain: `iss` of its certificates.
    ///   - issuerKey: the IdP key, published in the support document.
    ///   - userKey: the key the "browser" holds for every user (one key is enough for a stand-in).
    ///   - port: 0 for an ephemeral port.
    public init(domain: String = "browserid.demo.test", issuerKey: Signer, userKey: Signer, port: Int = 0, logger: Logger? = nil) {
        self.domain = domain
        self.issuerKey = issuerKey
        self.userKey = userKey
        self.loopback = StandInLoopback(port: port, logger: logger, label: "gatehouse.demo.browserid") { $0.makeRouter() }
    }

    /// `baseURL` + `/.well-known/browserid`.
    public var supportDocumentURL: String { baseURL + "/.well-known/browserid" }

    /// The support document: `public-key` plus the `authentication` and `provisioning` paths.
    public var supportDocument: String {
        Self.encode([
            "public-key": .object(issuerKey.publicKey.mapValues(JSONValue.string)),
            "authentication": .string("/browserid/sign_in"),
            "provisioning": .string("/browserid/provision"),
        ])
    }

    /// A backed assertion `<certificate>~<assertion>` for `email`, addressed to `audience`.
    /// - Parameters:
    ///   - lifetime: how long both the certificate and the assertion stay valid.
    ///   - now: the signing time (tests move it to mint expired assertions).
    public func mintAssertion(email: String, audience: String, lifetime: TimeInterval = 120, now: Date = Date()) -> String {
        let issuedAt = (now.timeIntervalSince1970 * 1000).rounded()
        let expires = issuedAt + lifetime * 1000
        let certificate = Self.jws(
            [
                "iss": .string(domain), "iat": .number(issuedAt), "exp": .number(expires),
                "principal": .object(["email": .string(email)]),
                "public-key": .object(userKey.publicKey.mapValues(JSONValue.string)),
            ], signer: issuerKey)
        let assertion = Self.jws(["aud": .string(audience), "exp": .number(expires)], signer: userKey)
        return "\(certificate)~\(assertion)"
    }

    // MARK: HTTP

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/.well-known/browserid") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=3600"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: self.supportDocument)))
        }
        router.get("/assertion") { request, _ in
            let query = Dictionary(FormEncoding.decode(request.uri.query ?? ""), uniquingKeysWith: { first, _ in first })
            guard let email = query["email"], email.hasSuffix("@" + self.domain), let audience = query["audience"], !audience.isEmpty else {
                return Response.json(
                    ["error": .string("invalid_request"), "error_description": .string("need email (at \(self.domain)) and audience")],
                    status: .badRequest)
            }
            return Response.json(["assertion": .string(self.mintAssertion(email: email, audience: audience))])
        }
        return router
    }

    // MARK: Encoding

    static func jws(_ payload: [String: JSONValue], signer: Signer) -> String {
        let header = Base64URL.encode(Data(encode(["alg": .string(signer.algorithm)]).utf8))
        let body = Base64URL.encode(Data(encode(payload).utf8))
        let input = "\(header).\(body)"
        return "\(input).\(Base64URL.encode(signer.sign(Data(input.utf8))))"
    }

    static func encode(_ object: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(JSONValue.object(object))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
